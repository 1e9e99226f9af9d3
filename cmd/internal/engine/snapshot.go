package engine

// dirtySet lists what changed since the last capture. An id may appear more
// than once; a capture looks each one up once.
type dirtySet struct {
	nodes    []ID
	sessions []ID
	leases   []ID // live leases and tombstones share their id
}

func (e *Engine) markNode(n *node) {
	if !n.dirty {
		n.dirty = true
		e.dirty.nodes = append(e.dirty.nodes, n.id)
	}
}

func (e *Engine) markSession(s *session) {
	if !s.dirty {
		s.dirty = true
		e.dirty.sessions = append(e.dirty.sessions, s.id)
	}
}

func (e *Engine) markLease(id ID) { e.dirty.leases = append(e.dirty.leases, id) }

// Delta is what changed since the previous capture: the record now of each
// changed id that still exists, and the ids of those that are gone, in
// parts copied one after another (Capture). An id listed twice in a part
// says the same thing twice; a later part says what became of it since.
type Delta struct {
	Seq          uint64
	Time         int64
	Next         ID
	Settings     Settings
	Nodes        []NodeRec
	NodesGone    []ID
	Sessions     []SessionRec
	SessionsGone []ID
	Leases       []LeaseRec
	LeasesGone   []ID
	Tombs        []TombRec
	TombsGone    []ID

	then  *Delta // the part Capture copied next, applied after this one
	whole bool   // no change was left to copy after this part
}

// defaultCaptureChunk is how many listed changes Capture copies under one
// hold of the lock.
const defaultCaptureChunk = 64

// Capture copies what changed since the previous capture. Its cost follows
// the rate of change, not the size of the tree; an Image turns the deltas
// into whole snapshots outside the lock. It copies in parts of at most
// captureChunk listed changes, each under a hold of the lock of its own,
// other calls running between two parts (and changing what a later part
// copies): the delta is the chain of the parts, applied in order, and says
// what the engine held at the last part, at its Seq. Each part counts as a
// capture of its own for what an image already holds. Captures must reach
// one Image in order. The change lists are emptied, not dropped, so the next
// round appends into the same memory. An id that came and went since the
// previous part is in no image and is left out: under churn most lease ids
// are such.
func (e *Engine) Capture() *Delta {
	first, pace := e.capturePart(), e.pacer()
	for d := first; !d.whole; d = d.then {
		pace.Between() // a call waiting for the lock takes it before the next part does
		d.then = e.capturePart()
	}
	return first
}

// capturePart copies, under one hold of the lock, at most captureChunk
// listed changes, the latest listed first, and reports in whole whether
// none is left.
func (e *Engine) capturePart() *Delta {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := &Delta{Seq: e.seq, Time: e.last, Next: e.next, Settings: e.settings}
	left := e.captureChunk
	if left == 0 {
		left = defaultCaptureChunk
	}
	listed := e.listMarksLocked(&left)
	ids := takeLast(&e.dirty.nodes, &left)
	d.Nodes = make([]NodeRec, 0, len(ids))
	for _, id := range ids {
		if n := e.nodes[id]; n != nil {
			d.Nodes = append(d.Nodes, n.record())
			n.dirty = false
		} else if id < e.captured {
			d.NodesGone = append(d.NodesGone, id)
		}
	}
	ids = takeLast(&e.dirty.sessions, &left)
	d.Sessions = make([]SessionRec, 0, len(ids))
	for _, id := range ids {
		if s := e.sessions[id]; s != nil {
			d.Sessions = append(d.Sessions, s.record())
			s.dirty = false
		} else if id < e.captured {
			d.SessionsGone = append(d.SessionsGone, id)
		}
	}
	e.captureLeasesLocked(d, takeLast(&e.dirty.leases, &left))
	e.captured = e.next
	d.whole = listed && len(e.dirty.nodes)+len(e.dirty.sessions)+len(e.dirty.leases) == 0
	return d
}

// takeLast takes at most *left ids off the end of list and counts them off
// *left. The ids stay valid until the list is appended to.
func takeLast(list *[]ID, left *int) []ID {
	k := min(*left, len(*list))
	*left -= k
	ids := (*list)[len(*list)-k:]
	*list = (*list)[:len(*list)-k]
	return ids
}

// captureLeasesLocked copies the listed lease ids: a live lease and a
// tombstone share their id, so each id is looked up as both.
func (e *Engine) captureLeasesLocked(d *Delta, ids []ID) {
	d.Leases = make([]LeaseRec, 0, min(len(ids), len(e.leases)))
	d.Tombs = make([]TombRec, 0, min(len(ids), len(e.tombs)))
	for _, id := range ids {
		if l := e.leases[id]; l != nil {
			d.Leases = append(d.Leases, l.record())
		} else if id < e.captured {
			d.LeasesGone = append(d.LeasesGone, id)
		}
		if t, ok := e.tombs[id]; ok {
			d.Tombs = append(d.Tombs, t.record())
		} else if id < e.captured {
			d.TombsGone = append(d.TombsGone, id)
		}
	}
}

// Image is a whole snapshot kept up to date from deltas. It belongs to the
// one goroutine that snapshots; it shares nothing with the engine.
type Image struct {
	seq      uint64
	time     int64
	next     ID
	settings Settings
	nodes    map[ID]*NodeRec
	sessions map[ID]*SessionRec
	leases   map[ID]*LeaseRec
	tombs    map[ID]*TombRec
}

// NewImage starts an image from a snapshot (nil for an empty engine).
func NewImage(st *Snapshot) *Image {
	im := &Image{
		nodes: make(map[ID]*NodeRec), sessions: make(map[ID]*SessionRec),
		leases: make(map[ID]*LeaseRec), tombs: make(map[ID]*TombRec),
	}
	if st == nil {
		return im
	}
	im.seq, im.time, im.next, im.settings = st.Seq, st.Time, st.Next, st.Settings
	for i := range st.Nodes {
		im.nodes[st.Nodes[i].ID] = &st.Nodes[i]
	}
	for i := range st.Sessions {
		im.sessions[st.Sessions[i].ID] = &st.Sessions[i]
	}
	for i := range st.Leases {
		im.leases[st.Leases[i].ID] = &st.Leases[i]
	}
	for i := range st.Tombs {
		im.tombs[st.Tombs[i].ID] = &st.Tombs[i]
	}
	return im
}

// Apply folds a delta into the image, each of its parts in order. Each record is copied out of the
// delta, so a record that stays current does not keep its delta alive.
func (im *Image) Apply(d *Delta) {
	for ; d != nil; d = d.then {
		im.seq, im.time, im.next, im.settings = d.Seq, d.Time, d.Next, d.Settings
		merge(im.nodes, d.Nodes, d.NodesGone, func(r *NodeRec) ID { return r.ID })
		merge(im.sessions, d.Sessions, d.SessionsGone, func(r *SessionRec) ID { return r.ID })
		merge(im.leases, d.Leases, d.LeasesGone, func(r *LeaseRec) ID { return r.ID })
		merge(im.tombs, d.Tombs, d.TombsGone, func(r *TombRec) ID { return r.ID })
	}
}

func merge[T any](into map[ID]*T, recs []T, gone []ID, id func(*T) ID) {
	for _, g := range gone {
		delete(into, g)
	}
	for i := range recs {
		r := recs[i]
		into[id(&r)] = &r
	}
}

// Seq returns the sequence number the image is at.
func (im *Image) Seq() uint64 { return im.seq }

// Snapshot returns the image as a snapshot, in a stable order. The records
// are shared with the image: encode the snapshot before the next Apply.
func (im *Image) Snapshot() *Snapshot {
	st := &Snapshot{Seq: im.seq, Time: im.time, Next: im.next, Settings: im.settings}
	st.Nodes = values(im.nodes)
	st.Sessions = values(im.sessions)
	st.Leases = values(im.leases)
	st.Tombs = values(im.tombs)
	st.sort()
	return st
}

func values[T any](m map[ID]*T) []T {
	if len(m) == 0 {
		return nil
	}
	out := make([]T, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	return out
}

// Dump returns the whole state now, without disturbing what Capture tracks.
// It is O(size of the tree): for tests and tools, not for the snapshot path.
func (e *Engine) Dump() *Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := &Snapshot{Seq: e.seq, Time: e.last, Next: e.next, Settings: e.settings}
	for _, n := range e.nodes {
		st.Nodes = append(st.Nodes, n.record())
	}
	for _, s := range e.sessions {
		st.Sessions = append(st.Sessions, s.record())
	}
	for _, l := range e.leases {
		st.Leases = append(st.Leases, l.record())
	}
	for _, t := range e.tombs {
		st.Tombs = append(st.Tombs, t.record())
	}
	st.sort()
	return st
}

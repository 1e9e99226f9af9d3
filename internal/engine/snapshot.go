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

// Delta is what changed since the previous capture: for each changed id its
// record now, or nil if it is gone.
type Delta struct {
	Seq      uint64
	Time     int64
	Next     ID
	Settings Settings
	Nodes    map[ID]*NodeRec
	Sessions map[ID]*SessionRec
	Leases   map[ID]*LeaseRec
	Tombs    map[ID]*TombRec
}

// Capture copies what changed since the previous capture. It holds the lock
// only for that copy, so its cost follows the rate of change, not the size of
// the tree; an Image turns the deltas into whole snapshots outside the lock.
// Captures must reach one Image in order.
func (e *Engine) Capture() *Delta {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := &Delta{
		Seq: e.seq, Time: e.last, Next: e.next, Settings: e.settings,
		Nodes:    make(map[ID]*NodeRec, len(e.dirty.nodes)),
		Sessions: make(map[ID]*SessionRec, len(e.dirty.sessions)),
		Leases:   make(map[ID]*LeaseRec, len(e.dirty.leases)),
		Tombs:    make(map[ID]*TombRec, len(e.dirty.leases)),
	}
	for _, id := range e.dirty.nodes {
		d.Nodes[id] = nil
		if n := e.nodes[id]; n != nil {
			r := n.record()
			d.Nodes[id] = &r
			n.dirty = false
		}
	}
	for _, id := range e.dirty.sessions {
		d.Sessions[id] = nil
		if s := e.sessions[id]; s != nil {
			r := s.record()
			d.Sessions[id] = &r
			s.dirty = false
		}
	}
	for _, id := range e.dirty.leases {
		d.Leases[id], d.Tombs[id] = nil, nil
		if l := e.leases[id]; l != nil {
			r := l.record()
			d.Leases[id] = &r
		}
		if t, ok := e.tombs[id]; ok {
			r := t.record()
			d.Tombs[id] = &r
		}
	}
	e.dirty = dirtySet{}
	return d
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

// Apply folds a delta into the image.
func (im *Image) Apply(d *Delta) {
	im.seq, im.time, im.next, im.settings = d.Seq, d.Time, d.Next, d.Settings
	merge(im.nodes, d.Nodes)
	merge(im.sessions, d.Sessions)
	merge(im.leases, d.Leases)
	merge(im.tombs, d.Tombs)
}

func merge[T any](into, from map[ID]*T) {
	for id, r := range from {
		if r == nil {
			delete(into, id)
		} else {
			into[id] = r
		}
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

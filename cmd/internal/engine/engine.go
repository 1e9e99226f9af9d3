package engine

import (
	"sync"

	"governor.dev/governor/cmd/internal/pace"
)

// Engine is the whole tree and every rule about it. Create one with New or
// Restore; the zero value is not usable. Safe for concurrent use.
type Engine struct {
	clock Clock
	sink  Sink
	wall  pace.Clock // what long tasks pace themselves by

	freeMu sync.Mutex // guards free, so Recycle never waits on mu
	free   []*Event   // events given back by Recycle, for reuse

	mu         sync.Mutex // guards every field below
	seq        uint64     // sequence number of the last event
	last       int64      // time of the last event; the engine's time never goes back
	next       ID         // next id to hand out
	settings   Settings
	nodes      map[ID]*node
	root       *node
	sessions   map[ID]*session
	tokens     map[[32]byte]*session
	leases     map[ID]*lease
	tombs      map[ID]tombstone
	queues     map[string]*classQueue
	arrivals   uint64 // order of waiters
	endedNodes int    // nodes in the tree that have ended
	rateCaps   int    // rate caps on nodes in the tree

	timers timers  // heaps of the times at which something may expire
	memOld memHeap // sessions remembering ids beyond their most recent RequestMemory (see reqmemory.go)

	dispatch []string // classes whose queue may now grant, set by apply
	spare    []*Event // events to make emitted events in: fresh ones, or ones given back

	freeLeases []*lease // ended leases kept for reuse
	dirty      dirtySet // entities changed since the last snapshot capture
	captured   ID       // next at the last capture: an id at or above it is in no image yet
	replay     bool     // applying recorded events: no waiters, no dispatch

	ending    []endCursor  // subtrees being ended a step at a time (see ending.go)
	midway    map[ID]*node // ended nodes with active children that a restore or replay left, not yet in ending
	orphaned  []ID         // nodes a restore found marked, to be ended in steps, in order (see orphans.go)
	ownerEnds []*session   // ended sessions whose nodes steps still end, in the order they ended
	unlisted  []*session   // ended sessions whose marked nodes Capture has not all listed as changed
	dooms     uint64       // the last place given in the order of dooms
	endStep   int          // nodes a step of ending looks at; 0: defaultEndStep

	removing     []removeCursor // the subtree being removed a step at a time, deepest last (see removal.go)
	captureChunk int            // listed changes a part of Capture copies; 0: defaultCaptureChunk

	bounds bounding // the tenants' limits (see bounds.go)
}

// Options are what an engine is built with.
type Options struct {
	Clock Clock // required
	Sink  Sink  // nil discards events
}

type discard struct{}

func (discard) Emit(*Event) {}

// New returns an empty engine: the root node, default settings, no events.
func New(opts Options) *Engine {
	e := newEngine(opts)
	e.root = &node{id: RootID, name: "root"}
	e.root.tenant = e.root
	e.nodes[RootID] = e.root
	e.next = RootID + 1
	e.settings = DefaultSettings()
	e.markNode(e.root)
	return e
}

func newEngine(opts Options) *Engine {
	if opts.Sink == nil {
		opts.Sink = discard{}
	}
	return &Engine{
		wall:     pace.Machine,
		clock:    opts.Clock,
		sink:     opts.Sink,
		nodes:    make(map[ID]*node),
		sessions: make(map[ID]*session),
		tokens:   make(map[[32]byte]*session),
		leases:   make(map[ID]*lease),
		tombs:    make(map[ID]tombstone),
		queues:   make(map[string]*classQueue),
		bounds:   bounding{def: DefaultBounds()},
	}
}

// Seq returns the sequence number of the last event.
func (e *Engine) Seq() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seq
}

// Settings returns the settings in force.
func (e *Engine) Settings() Settings {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settings
}

// nowLocked reads the clock. The engine's time never goes back, so events are
// in time order as well as in sequence order.
func (e *Engine) nowLocked() int64 {
	t := e.clock.Now().UnixNano()
	if t < e.last {
		return e.last
	}
	return t
}

// emitLocked gives ev the next sequence number and the time now, applies it,
// and hands it to the sink. Live events cannot fail to apply: the operation
// checked everything first, so a failure is a bug.
//
// The sink keeps what it is given until it gives it back with Recycle, so it
// gets a spare event: ev itself if it came from nextEventLocked, otherwise a
// copy, and ev stays the caller's (it can live on its stack). Once the sink
// has it, the sink may give it back at any time, even before the engine lock
// is let go: nothing reads it after the sink.
func (e *Engine) emitLocked(ev *Event, now int64) {
	ev.Seq = e.seq + 1
	ev.Time = now
	kept := e.spareLocked()
	e.spare = e.spare[:len(e.spare)-1]
	if kept != ev {
		*kept = *ev
	}
	if err := e.applyLocked(kept); err != nil {
		panic("engine: live event failed to apply: " + err.Error())
	}
	e.sink.Emit(kept)
}

// nextEventLocked returns the zero event that the next emitLocked hands to
// the sink. A hot path fills it in place and emits it at once, with nothing
// emitted in between, and so saves a copy.
func (e *Engine) nextEventLocked() *Event {
	ev := e.spareLocked()
	*ev = Event{}
	return ev
}

// spareLocked returns the spare event the next emitLocked takes. It may still
// hold an event given back: a copy overwrites all of it, and nextEventLocked
// clears it. Clearing it here, on the engine's processor, rather than in
// Recycle on the writer's, saves moving its memory between processors twice.
func (e *Engine) spareLocked() *Event {
	if len(e.spare) == 0 {
		e.freeMu.Lock()
		e.spare, e.free = e.free, e.spare
		e.freeMu.Unlock()
	}
	if len(e.spare) == 0 {
		block := make([]Event, eventBlock)
		for i := range block {
			e.spare = append(e.spare, &block[i])
		}
	}
	return e.spare[len(e.spare)-1]
}

// eventBlock is how many events one allocation holds when none are spare:
// 17 events of 240 bytes fill the allocator's 4,096-byte size class, two to
// a span.
const eventBlock = 17

// maxFree bounds how many given-back events wait for reuse, so a burst of
// events does not keep its memory for ever.
const maxFree = 8192

// Recycle gives the engine back events its sink was handed and is done with:
// the sink and everyone it passed them to must never read them again, and
// each event may be given back only once. The engine makes later events in
// them, which saves an allocation and its garbage per event. A sink that
// never calls Recycle keeps its events for as long as it likes.
func (e *Engine) Recycle(evs []*Event) {
	e.freeMu.Lock()
	if room := maxFree - len(e.free); room < len(evs) {
		evs = evs[:max(room, 0)]
	}
	e.free = append(e.free, evs...)
	e.freeMu.Unlock()
}

// finishLocked ends a live operation: it lets every queue that may now grant
// do so, and tells the caller how far the record must reach.
func (e *Engine) finishLocked(c *Call, now int64) {
	e.dispatchFreedLocked(now)
	c.Seq = e.seq
}

// dispatchFreedLocked serves the queues of the classes whose slots were
// freed since it last ran.
func (e *Engine) dispatchFreedLocked(now int64) {
	for len(e.dispatch) > 0 {
		class := e.dispatch[len(e.dispatch)-1]
		e.dispatch = e.dispatch[:len(e.dispatch)-1]
		e.dispatchLocked(class, now)
	}
}

// Configure records new settings, if they differ from those in force.
func (e *Engine) Configure(c *Call, s Settings) error {
	if err := validSettings(&s); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	if c.Session != 0 {
		c.Seq = e.seq
		return ErrForbidden
	}
	if e.settings != s {
		e.emitLocked(&Event{Kind: KindSettings, Settings: &s}, now)
	}
	e.finishLocked(c, now)
	return nil
}

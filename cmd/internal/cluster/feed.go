package cluster

import (
	"sync"

	"governor.dev/governor/cmd/internal/engine"
)

// Fed receives what a replica applies, once it is set with FSM.Feed. Both
// methods run with no command applying, the second on raft's FSM goroutine,
// which waits for them: they must not block for long or call Feed.
type Fed interface {
	// Load gives the replica's engine to read the state from: at Feed,
	// and each time a snapshot replaces the engine, after which the events
	// fed before do not continue.
	Load(e *engine.Engine)
	// Applied gets the events of one applied command (applied means
	// committed), in sequence order. They go back to the engine when it
	// returns: it must not keep them.
	Applied(evs []*engine.Event)
}

// applyFeed is a replica engine's event sink: it keeps the events of the
// command being applied and hands them over once the command is done.
type applyFeed struct {
	mu sync.Mutex // guards to; held across a hand-over
	to Fed        // nil until Feed

	pmu     sync.Mutex      // guards pending; taken under the engine lock, so innermost
	pending []*engine.Event // emitted by the command being applied
	spare   []*engine.Event // the slice handed over last, reused
}

// Emit keeps ev until the command that made it has applied.
func (fd *applyFeed) Emit(ev *engine.Event) {
	fd.pmu.Lock()
	fd.pending = append(fd.pending, ev)
	fd.pmu.Unlock()
}

// handOver gives the pending events to the Fed, if any, then back to e.
func (fd *applyFeed) handOver(e *engine.Engine) {
	fd.pmu.Lock()
	evs := fd.pending
	fd.pending = fd.spare[:0]
	fd.pmu.Unlock()
	if len(evs) == 0 {
		fd.spare = evs
		return
	}
	fd.mu.Lock()
	if fd.to != nil {
		fd.to.Applied(evs)
	}
	fd.mu.Unlock()
	e.Recycle(evs)
	clear(evs)
	fd.spare = evs[:0]
}

// load tells the Fed, if any, that e now holds the replica's state.
func (fd *applyFeed) load(e *engine.Engine) {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	if fd.to != nil {
		fd.to.Load(e)
	}
}

// Feed makes to receive the events of every command applied from now on.
// It first calls to.Load with the replica's engine: the events of commands
// applying meanwhile reach to.Applied afterwards, so what to reads from the
// engine and what it is fed leave no gap (events it has read are fed again;
// their sequence numbers tell). One Fed at a time: a later call replaces an
// earlier one.
func (f *FSM) Feed(to Fed) {
	f.feed.mu.Lock()
	defer f.feed.mu.Unlock()
	to.Load(f.Engine())
	f.feed.to = to
}

package server

import (
	"sync"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/pace"
)

// feedBehind is how many committed events the hub may have still to
// apply before Publish waits for it.
const feedBehind = 8192

// drainPiece is how many events the drain applies between two yields: one
// step of a wide tenant's, 64 nodes ended or removed, takes the hub
// some 40 µs.
const drainPiece = 4

// hubQueue hands committed events to the hub on a goroutine of its own. The
// store's writer goroutine, which calls Publish, commits every tenant's
// events; when it mirrored a wide tenant's steps itself (a map update or
// two for each of the 64 nodes a step names), every other commit waited for
// that work. Now it copies each event (its lists and specs are never
// changed once emitted, so the copy may share them) and goes back to
// committing; the drain goroutine applies the copies in order. The drain
// goroutine runs only while events wait, so the feed needs no stopping.
// It applies them drainPiece at a time, paced (package pace): a wide
// tenant's cancel queues thousands of events at once, and applying them in
// one go held a processor for up to 7 ms, which every call queued behind
// it on that processor waited for.
type hubQueue struct {
	hub  *hub
	eng  *engine.Engine // for a reload after a gap (hub.publish)
	wall pace.Clock     // what the drain paces itself by

	mu      sync.Mutex     // guards the fields below
	queue   []engine.Event // committed and not yet applied, in order
	spare   []engine.Event // an empty buffer to swap with queue
	running bool           // a drain goroutine is applying the queue
	caught  *sync.Cond     // signalled when the drain takes the queue
}

func newHubQueue(h *hub, eng *engine.Engine) *hubQueue {
	f := &hubQueue{hub: h, eng: eng, wall: pace.Machine}
	f.caught = sync.NewCond(&f.mu)
	return f
}

// publish queues copies of evs for the hub and returns. While feedBehind
// events wait already, it first waits for the drain to take them: then
// the writer waits for the hub as it did when it applied events itself,
// and memory stays bounded.
func (f *hubQueue) publish(evs []*engine.Event) {
	f.mu.Lock()
	for len(f.queue) >= feedBehind {
		f.caught.Wait()
	}
	for _, ev := range evs {
		f.queue = append(f.queue, *ev)
	}
	start := !f.running && len(f.queue) > 0
	f.running = f.running || start
	f.mu.Unlock()
	if start {
		go f.drain()
	}
}

// drain applies what is queued until nothing is.
func (f *hubQueue) drain() {
	ptrs, pacer, applied := make([]*engine.Event, 0, drainPiece), pace.New(f.wall), false
	for {
		f.mu.Lock()
		batch := f.queue
		f.queue, f.spare = f.spare[:0], nil
		if len(batch) == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.caught.Broadcast()
		f.mu.Unlock()
		for i := 0; i < len(batch); i += drainPiece {
			if applied {
				pacer.Between()
			}
			applied = true
			ptrs = ptrs[:0]
			for j := i; j < min(i+drainPiece, len(batch)); j++ {
				ptrs = append(ptrs, &batch[j])
			}
			f.hub.publish(ptrs, f.eng)
		}
		clear(ptrs[:cap(ptrs)])
		clear(batch)
		f.mu.Lock()
		f.spare = batch[:0]
		f.mu.Unlock()
	}
}

package server

import (
	"sync"

	"governor.dev/governor/cmd/internal/engine"
)

// feedBehind is how many committed events the hub may have still to
// apply before Publish waits for it.
const feedBehind = 8192

// hubQueue hands committed events to the hub on a goroutine of its own. The
// store's writer goroutine, which calls Publish, commits every tenant's
// events; when it mirrored a wide tenant's steps itself (a map update or
// two for each of the 64 nodes a step names), every other commit waited for
// that work. Now it copies each event (its lists and specs are never
// changed once emitted, so the copy may share them) and goes back to
// committing; the drain goroutine applies the copies in order. The drain
// goroutine runs only while events wait, so the feed needs no stopping.
type hubQueue struct {
	hub *hub
	eng *engine.Engine // for a reload after a gap (hub.publish)

	mu      sync.Mutex     // guards the fields below
	queue   []engine.Event // committed and not yet applied, in order
	spare   []engine.Event // an empty buffer to swap with queue
	running bool           // a drain goroutine is applying the queue
	caught  *sync.Cond     // signalled when the drain takes the queue
}

func newHubQueue(h *hub, eng *engine.Engine) *hubQueue {
	f := &hubQueue{hub: h, eng: eng}
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
	var ptrs []*engine.Event
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
		ptrs = ptrs[:0]
		for i := range batch {
			ptrs = append(ptrs, &batch[i])
		}
		f.hub.publish(ptrs, f.eng)
		clear(ptrs)
		clear(batch)
		f.mu.Lock()
		f.spare = batch[:0]
		f.mu.Unlock()
	}
}

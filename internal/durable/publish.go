package durable

import (
	"sync"

	"governor.dev/governor/internal/engine"
)

// publisher holds emitted events until the writer reports them on record,
// then hands them to Options.Committed. add runs with the engine lock held;
// flush runs on the writer goroutine. Lock order: engine, then mu.
type publisher struct {
	deliver func([]*engine.Event)

	mu      sync.Mutex // guards pending
	pending []*engine.Event
}

func (p *publisher) add(ev *engine.Event) {
	p.mu.Lock()
	p.pending = append(p.pending, ev)
	p.mu.Unlock()
}

// flush delivers every pending event up to durable, in order.
func (p *publisher) flush(durable uint64) {
	p.mu.Lock()
	n := 0
	for n < len(p.pending) && p.pending[n].Seq <= durable {
		n++
	}
	out := make([]*engine.Event, n)
	copy(out, p.pending[:n])
	rest := copy(p.pending, p.pending[n:])
	clear(p.pending[rest:])
	p.pending = p.pending[:rest]
	p.mu.Unlock()
	if n > 0 {
		p.deliver(out)
	}
}

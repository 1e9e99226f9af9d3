package linz

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// refQuota is an in-process quota: one copy of the usage under a mutex, which
// is linearizable. With lagging set it is broken on purpose: reads come from
// a copy one write behind, as a follower that has not applied the last
// entry would serve them.
type refQuota struct {
	limit   int64
	lagging bool

	mu      sync.Mutex // guards the fields below
	usage   map[string]int64
	behind  map[string]int64
	answers map[string]bool // by request id
}

// consumeOnce applies a Consume with a request id at most once.
func (q *refQuota) consumeOnce(key string, n int64, id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if first, seen := q.answers[id]; seen {
		return first
	}
	ok := q.consumeLocked(key, n)
	q.answers[id] = ok
	return ok
}

func (q *refQuota) consume(key string, n int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.consumeLocked(key, n)
}

func (q *refQuota) consumeLocked(key string, n int64) bool {
	q.behind[key] = q.usage[key]
	ok := q.usage[key] <= q.limit-n
	if ok {
		q.usage[key] += n
	}
	return ok
}

func (q *refQuota) read(key string) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.lagging {
		return q.behind[key]
	}
	return q.usage[key]
}

// refPool is an in-process lease pool under a mutex. With lagging set,
// Validate reads a copy of the held set one change behind.
type refPool struct {
	limit   int
	lagging bool

	mu     sync.Mutex // guards the fields below
	next   int
	held   map[string]bool
	behind map[string]bool
}

func (p *refPool) change(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.behind = make(map[string]bool, len(p.held))
	for id := range p.held {
		p.behind[id] = true
	}
	f()
}

func (p *refPool) acquire() (id string, ok bool) {
	p.change(func() {
		if len(p.held) < p.limit {
			p.next++
			id, ok = fmt.Sprintf("L%d", p.next), true
			p.held[id] = true
		}
	})
	return id, ok
}

func (p *refPool) release(id string) (ok bool) {
	p.change(func() {
		ok = p.held[id]
		delete(p.held, id)
	})
	return ok
}

func (p *refPool) validate(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lagging {
		return p.behind[id]
	}
	return p.held[id]
}

// drive runs clients concurrent clients, each calling step rounds times
// with its own seeded source, and returns the recorded history.
func drive(clients, rounds int, step func(r *Recorder, client int, rng *rand.Rand)) []porcupine.Operation {
	rec := NewRecorder()
	var wg sync.WaitGroup
	for c := range clients {
		rng := rand.New(rand.NewPCG(uint64(c), 7))
		wg.Go(func() {
			for range rounds {
				step(rec, c, rng)
			}
		})
	}
	wg.Wait()
	return rec.History()
}

func quotaHistory(q *refQuota) []porcupine.Operation {
	return drive(4, 60, func(r *Recorder, c int, rng *rand.Rand) {
		key := fmt.Sprintf("k%d", rng.IntN(2))
		n := 1 + rng.Int64N(4)
		r.Call(c, consume(key, n)).Return(QuotaResult{OK: q.consume(key, n)})
		r.Call(c, read(key)).Return(usage(q.read(key)))
	})
}

func poolHistory(p *refPool) []porcupine.Operation {
	return drive(4, 40, func(r *Recorder, c int, rng *rand.Rand) {
		a := r.Call(c, acquireOp())
		id, ok := p.acquire()
		a.Return(LeaseResult{OK: ok, ID: id})
		if !ok {
			return
		}
		r.Call(c, validateOp(id)).Return(LeaseResult{OK: p.validate(id)})
		r.Call(c, releaseOp(id)).Return(LeaseResult{OK: p.release(id)})
		r.Call(c, validateOp(id)).Return(LeaseResult{OK: p.validate(id)})
	})
}

func newQuota(lagging bool) *refQuota {
	return &refQuota{limit: 150, lagging: lagging, usage: map[string]int64{}, behind: map[string]int64{}, answers: map[string]bool{}}
}

func newPool(lagging bool) *refPool {
	return &refPool{limit: 2, lagging: lagging, held: map[string]bool{}, behind: map[string]bool{}}
}

func TestRandomHistoriesOfLinearizableReferences(t *testing.T) {
	Check(t, Quota(150), quotaHistory(newQuota(false)), 30*time.Second)
	Check(t, LeasePool(2), poolHistory(newPool(false)), 30*time.Second)
}

func TestRandomHistoriesOfLaggingReadsFail(t *testing.T) {
	if porcupine.CheckOperations(Quota(150), quotaHistory(newQuota(true))) {
		t.Error("reads one write behind passed the quota check")
	}
	if porcupine.CheckOperations(LeasePool(2), poolHistory(newPool(true))) {
		t.Error("validates one change behind passed the lease pool check")
	}
}

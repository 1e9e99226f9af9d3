package linz

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// flakyTarget serves calls from the in-process references and, from a seeded
// source, refuses some before applying them (ErrNotApplied) and loses the
// reply of others after applying them (an unknown outcome).
type flakyTarget struct {
	q *refQuota
	p *refPool

	mu  sync.Mutex // guards rng
	rng *rand.Rand
}

var errLostReply = errors.New("reply lost")

// fate draws what happens to a call: refused, applied with its reply lost,
// or applied and answered.
func (f *flakyTarget) fate() (refused, lost bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.rng.IntN(10)
	return r == 0, r == 1
}

func (f *flakyTarget) Consume(_ context.Context, key string, n int64, id string) (bool, error) {
	refused, lost := f.fate()
	if refused {
		return false, fmt.Errorf("consume: %w", ErrNotApplied)
	}
	ok := f.q.consumeOnce(key, n, id)
	if lost {
		return false, errLostReply
	}
	return ok, nil
}

func (f *flakyTarget) Read(_ context.Context, key string) (int64, error) {
	if refused, _ := f.fate(); refused {
		return 0, fmt.Errorf("read: %w", ErrNotApplied)
	}
	return f.q.read(key), nil
}

func (f *flakyTarget) Acquire(context.Context, string) (string, bool, error) {
	refused, lost := f.fate()
	if refused {
		return "", false, fmt.Errorf("acquire: %w", ErrNotApplied)
	}
	id, ok := f.p.acquire()
	if lost {
		return "", false, errLostReply
	}
	return id, ok, nil
}

func (f *flakyTarget) Release(_ context.Context, id string) (bool, error) {
	refused, lost := f.fate()
	if refused {
		return false, fmt.Errorf("release: %w", ErrNotApplied)
	}
	ok := f.p.release(id)
	if lost {
		return false, errLostReply
	}
	return ok, nil
}

func (f *flakyTarget) Validate(_ context.Context, id string) (bool, error) {
	return f.p.validate(id), nil
}

func flakyRun(lagging bool) Run {
	pool := newPool(false)
	pool.limit = 3
	return Run{
		Target:   &flakyTarget{q: newQuota(lagging), p: pool, rng: rand.New(rand.NewPCG(1, 2))},
		Clients:  5,
		Readers:  1,
		Pause:    time.Millisecond,
		Duration: 150 * time.Millisecond,
		Keys:     3,
		Seed:     1,
		Retries:  3,
		Timeout:  time.Second,
	}
}

// TestRunOfFlakyReferencePasses drives the references through refusals and
// lost replies: the histories, with unknown outcomes retried by request id,
// are linearizable.
func TestRunOfFlakyReferencePasses(t *testing.T) {
	h, err := flakyRun(false).Go(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Quota) == 0 || len(h.Leases) == 0 {
		t.Fatalf("run recorded %d quota and %d lease calls", len(h.Quota), len(h.Leases))
	}
	Check(t, Idempotent(150), h.Quota, time.Minute)
	Check(t, LeasePool(3), h.Leases, time.Minute)
}

// TestRunOfLaggingReadsFails is the negative control: the same run with reads
// one write behind is not linearizable.
func TestRunOfLaggingReadsFails(t *testing.T) {
	h, err := flakyRun(true).Go(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tb := &failingTB{TB: t}
	if Check(tb, Idempotent(150), h.Quota, time.Minute) {
		t.Fatal("reads one write behind passed the check")
	}
}

// TestRunMakesFaultsInOrder checks the fault schedule: each fault after the
// one before, and a failing fault ends the run with its error.
func TestRunMakesFaultsInOrder(t *testing.T) {
	var made []string
	step := func(name string, err error) Fault {
		return Fault{After: 10 * time.Millisecond, Name: name, Do: func() error { made = append(made, name); return err }}
	}
	r := flakyRun(false)
	r.Faults = []Fault{step("one", nil), step("two", errors.New("boom")), step("three", nil)}
	_, err := r.Go(t.Context())
	if err == nil || len(made) != 2 || made[0] != "one" || made[1] != "two" {
		t.Fatalf("faults made %v, error %v; want one, two, then the error of two", made, err)
	}
}

func TestRunRefusesBadSetup(t *testing.T) {
	for name, spoil := range map[string]func(*Run){
		"no clients":       func(r *Run) { r.Clients = 0 },
		"more readers":     func(r *Run) { r.Readers = r.Clients + 1 },
		"no keys":          func(r *Run) { r.Keys = 0 },
		"no time":          func(r *Run) { r.Duration = 0 },
		"no timeout":       func(r *Run) { r.Timeout = 0 },
		"negative retries": func(r *Run) { r.Retries = -1 },
		"no target":        func(r *Run) { r.Target = nil },
	} {
		r := flakyRun(false)
		spoil(&r)
		if _, err := r.Go(t.Context()); err == nil {
			t.Errorf("a run with %s was accepted", name)
		}
	}
}

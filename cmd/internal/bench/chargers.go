package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// chargers are the workers of the restart and the failover: each charges
// one unit at a time to a node of its own, with a request id per charge,
// and retries a charge that came back with an error with the same id until
// one is acknowledged.
type chargers struct {
	s     *session
	nodes []uint64
	per   []int  // charges per worker
	lease uint64 // held across the fault

	acked   atomic.Int64
	refused atomic.Int64  // calls that came back to a worker with an error
	third   chan struct{} // closed at a third of the charges
	ended   chan struct{} // closed when every worker has returned
	fault   atomic.Int64  // when the fault happened (Unix ns), 0 before
	first   atomic.Int64  // when a charge sent after the fault was first acknowledged (Unix ns)

	cancel  context.CancelFunc
	done    sync.WaitGroup
	mu      sync.Mutex // guards failure
	failure error
}

// newChargers makes workers charges in all, on nodes under one named
// after what (unique to the run) that the session s creates, and takes a
// lease of class what there.
func newChargers(ctx context.Context, t *target, s *session, what string, workers, charges int) (*chargers, error) {
	w := &chargers{s: s, third: make(chan struct{}), ended: make(chan struct{})}
	run, err := s.node(ctx, 1, &governorv1.NodeSpec{Name: t.name(what)})
	if err != nil {
		return nil, err
	}
	for i := range workers {
		id, err := s.node(ctx, run, &governorv1.NodeSpec{Name: fmt.Sprint("worker-", i)})
		if err != nil {
			return nil, err
		}
		w.nodes = append(w.nodes, id)
		w.per = append(w.per, charges/workers)
	}
	w.per[0] += charges % workers
	if w.lease, err = s.acquire(ctx, run, what); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *chargers) start(ctx context.Context) {
	ctx, w.cancel = context.WithTimeout(ctx, 5*time.Minute)
	total := 0
	for _, c := range w.per {
		total += c
	}
	for i := range w.nodes {
		w.done.Go(func() {
			for c := range w.per[i] {
				sent := time.Now().UnixNano()
				if err := w.charge(ctx, w.nodes[i], fmt.Sprintf("w%d-%d", i, c)); err != nil {
					w.mu.Lock()
					w.failure = err
					w.mu.Unlock()
					return
				}
				if fault := w.fault.Load(); fault != 0 && sent >= fault {
					w.first.CompareAndSwap(0, time.Now().UnixNano())
				}
				if w.acked.Add(1) == int64(total/3) {
					close(w.third)
				}
			}
		})
	}
	go func() {
		w.done.Wait()
		close(w.ended)
	}()
}

// faulted marks the moment of the fault.
func (w *chargers) faulted() { w.fault.Store(time.Now().UnixNano()) }

// gap is the time from the fault to the first acknowledgement of a charge
// sent after it; 0 when there was none.
func (w *chargers) gap() time.Duration {
	first, fault := w.first.Load(), w.fault.Load()
	if first == 0 || fault == 0 {
		return 0
	}
	return time.Duration(first - fault)
}

// charge spends one unit with the request id, retrying until governord
// answers.
func (w *chargers) charge(ctx context.Context, node uint64, id string) error {
	for {
		err := w.s.consume(ctx, node, "charges", 1, id)
		if err == nil {
			return nil
		}
		// No answer: the connection broke or was refused (a broken stream can
		// read as cancelled on this side).
		switch connect.CodeOf(err) {
		case connect.CodeUnavailable, connect.CodeUnknown, connect.CodeInternal, connect.CodeCanceled:
			w.refused.Add(1)
			sleep(ctx, 2*time.Millisecond)
			if ctx.Err() != nil {
				return fmt.Errorf("%w: governord did not come back: %w", ErrUnexpected, err)
			}
			continue
		}
		return err
	}
}

func (w *chargers) stop() {
	w.cancel()
	w.done.Wait()
}

// wait waits for every charge and returns the first failure.
func (w *chargers) wait() error {
	w.done.Wait()
	w.cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failure
}

// stillValid reports whether the workers' session and lease are still
// valid.
func (w *chargers) stillValid(ctx context.Context) (session, lease bool) {
	_, herr := w.s.api.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))
	v, verr := w.s.api.Validate(ctx, connect.NewRequest(&governorv1.ValidateRequest{LeaseId: w.lease}))
	return herr == nil, verr == nil && v.Msg.Valid
}

// onRecord sums what governord holds as used on the workers' nodes.
func (w *chargers) onRecord(ctx context.Context) (int64, error) {
	var sum int64
	for _, id := range w.nodes {
		info, err := w.s.describe(ctx, id)
		if err != nil {
			return 0, err
		}
		sum += info.Resources["charges"].GetUsed()
	}
	return sum, nil
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// RestartResult is governord killed and restarted mid-run, once per record.
type RestartResult struct {
	Workers int          `json:"workers"`
	Charges int          `json:"charges"`
	Runs    []RestartRun `json:"runs"`
}

// RestartRun is one record's run.
type RestartRun struct {
	Record           string        `json:"record"`
	Skipped          string        `json:"skipped,omitempty"`
	Downtime         time.Duration `json:"downtime_ns"` // from SIGKILL to serving again
	RefusedWhileDown int64         `json:"calls_refused_while_down"`
	Acknowledged     int64         `json:"charges_acknowledged"`
	OnRecord         int64         `json:"charges_on_record"`
	SessionValid     bool          `json:"session_valid_after"`
	LeaseValid       bool          `json:"lease_valid_after"`
}

func (r *RestartResult) Table() Table {
	t := Table{
		Title: fmt.Sprintf("governord restart: %d workers charge %d units one at a time; governord is killed (SIGKILL) and restarted a third of the way in",
			r.Workers, r.Charges),
		Columns: []string{"record", "downtime", "calls refused while down", "charges acknowledged", "charges on record", "session and lease after"},
		Notes:   []string{"A call refused while governord is down is retried with its request id, so a charge committed just before the kill is answered from the record and never applied twice."},
	}
	for _, run := range r.Runs {
		if run.Skipped != "" {
			t.Rows = append(t.Rows, []string{run.Record, "skipped: " + run.Skipped, "", "", "", ""})
			continue
		}
		t.Rows = append(t.Rows, []string{run.Record, ms(run.Downtime), n(run.RefusedWhileDown),
			n(run.Acknowledged), n(run.OnRecord), fmt.Sprintf("session %s, lease %s", valid(run.SessionValid), valid(run.LeaseValid))})
	}
	return t
}

func valid(ok bool) string {
	if ok {
		return "valid"
	}
	return "NOT valid"
}

func runRestart(ctx context.Context, e *env) (Result, error) {
	if e.Remote != nil {
		return nil, fmt.Errorf("%w: it kills governord", ErrNeedsOwnGovernord)
	}
	r := &RestartResult{Workers: e.Sizes.RestartWorkers, Charges: e.Sizes.RestartCharges}
	id := randomHex(4)
	sqlite, err := restartRun(ctx, e, "sqlite:"+filepath.Join(e.Dir, "restart-"+id+".db"))
	if err != nil {
		return nil, fmt.Errorf("SQLite: %w", err)
	}
	sqlite.Record = "SQLite"
	pg := RestartRun{Record: "PostgreSQL", Skipped: "no PostgreSQL URL given (-database-url)"}
	if e.PostgresURL != "" {
		if pg, err = restartRun(ctx, e, e.PostgresURL); err != nil {
			return nil, fmt.Errorf("PostgreSQL: %w", err)
		}
		pg.Record = "PostgreSQL"
	}
	r.Runs = []RestartRun{sqlite, pg}
	return r, nil
}

// restartRun runs the workers against a governord process on the record at
// dbURL, kills it a third of the way in, starts it again on the same port,
// and compares what was acknowledged with what is on record.
func restartRun(ctx context.Context, e *env, dbURL string) (_ RestartRun, err error) {
	var out RestartRun
	key := randomHex(16)
	cfg := filepath.Join(e.Dir, "governord-"+randomHex(4)+".yaml")
	if err := os.WriteFile(cfg, []byte(configYAML(key, "127.0.0.1:0", "", settings{databaseURL: dbURL})), 0o600); err != nil {
		return out, err
	}
	defer os.Remove(cfg)
	p, err := startProc(e.Governord, "-config", cfg)
	if err != nil {
		return out, err
	}
	base, err := p.serving(time.Minute)
	if err != nil {
		return out, err
	}
	defer func() {
		if p != nil {
			err = errors.Join(err, p.signal(syscall.SIGTERM))
		}
	}()
	t, err := newTarget(clientconn.Config{Addr: base}, key)
	if err != nil {
		return out, err
	}
	defer t.close()
	w, err := newChargers(ctx, t, e.Sizes)
	if err != nil {
		return out, err
	}
	w.start(ctx)
	select {
	case <-w.third:
	case <-w.ended:
		return out, errors.Join(fmt.Errorf("%w: the workers stopped before a third of the charges", ErrUnexpected), w.wait())
	}
	killed := time.Now()
	if err := p.signal(syscall.SIGKILL); err != nil {
		return out, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return out, err
	}
	if p, err = startProc(e.Governord, "-config", cfg, "-listen", u.Host); err != nil {
		return out, err
	}
	if _, err := p.serving(time.Minute); err != nil {
		w.stop()
		return out, err
	}
	out.Downtime = time.Since(killed)
	if err := w.wait(); err != nil {
		return out, err
	}
	out.RefusedWhileDown, out.Acknowledged = w.refused.Load(), w.acked.Load()
	if out.OnRecord, err = w.onRecord(ctx); err != nil {
		return out, err
	}
	_, herr := w.s.api.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))
	out.SessionValid = herr == nil
	v, verr := w.s.api.Validate(ctx, connect.NewRequest(&governorv1.ValidateRequest{LeaseId: w.lease}))
	out.LeaseValid = verr == nil && v.Msg.Valid
	return out, nil
}

// chargers are the restart's workers: each charges one unit at a time to a
// node of its own, with a request id per charge, and retries a charge that
// got no answer with the same id until one comes.
type chargers struct {
	s     *session
	nodes []uint64
	per   []int  // charges per worker
	lease uint64 // held across the restart

	acked   atomic.Int64
	refused atomic.Int64  // calls that failed while governord was down
	third   chan struct{} // closed at a third of the charges
	ended   chan struct{} // closed when every worker has returned

	cancel  context.CancelFunc
	done    sync.WaitGroup
	mu      sync.Mutex // guards failure
	failure error
}

func newChargers(ctx context.Context, t *target, sz Sizes) (*chargers, error) {
	s, err := t.session(ctx, sessionTTL)
	if err != nil {
		return nil, err
	}
	w := &chargers{s: s, third: make(chan struct{}), ended: make(chan struct{})}
	run, err := s.node(ctx, 1, &governorv1.NodeSpec{Name: t.name("restart")})
	if err != nil {
		return nil, err
	}
	for i := range sz.RestartWorkers {
		id, err := s.node(ctx, run, &governorv1.NodeSpec{Name: fmt.Sprint("worker-", i)})
		if err != nil {
			return nil, err
		}
		w.nodes = append(w.nodes, id)
		w.per = append(w.per, sz.RestartCharges/sz.RestartWorkers)
	}
	w.per[0] += sz.RestartCharges % sz.RestartWorkers
	if w.lease, err = s.acquire(ctx, run, "restart"); err != nil {
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
				if err := w.charge(ctx, w.nodes[i], fmt.Sprintf("w%d-%d", i, c)); err != nil {
					w.mu.Lock()
					w.failure = err
					w.mu.Unlock()
					return
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

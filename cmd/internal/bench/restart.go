package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"governor.dev/governor/internal/clientconn"
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
		t.Rows = append(t.Rows, []string{run.Record, ms(run.Downtime), num(run.RefusedWhileDown),
			num(run.Acknowledged), num(run.OnRecord), fmt.Sprintf("session %s, lease %s", valid(run.SessionValid), valid(run.LeaseValid))})
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
	s, err := t.session(ctx, sessionTTL)
	if err != nil {
		return out, err
	}
	w, err := newChargers(ctx, t, s, "restart", e.Sizes.RestartWorkers, e.Sizes.RestartCharges)
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
	out.SessionValid, out.LeaseValid = w.stillValid(ctx)
	return out, nil
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// clusterMembers is how many governord processes the failover starts.
const clusterMembers = 3

// FailoverResult is a cluster of governord processes whose leader is
// killed with SIGKILL while workers charge through it.
type FailoverResult struct {
	Members int `json:"members"`
	Workers int `json:"workers"`
	Charges int `json:"charges"`
	// Gap runs from the SIGKILL to the first acknowledgement of a charge
	// sent after it.
	Gap time.Duration `json:"gap_ns"`
	// Refused counts the calls that came back to a worker with an error
	// (its client's own retries across the members ran out); each is sent
	// again with its request id.
	Refused int64 `json:"calls_refused"`
	// Attempts counts what the workers' client met on its way, from the
	// kill on.
	Attempts     Attempts `json:"attempts_after_kill"`
	Acknowledged int64    `json:"charges_acknowledged"`
	OnRecord     int64    `json:"charges_on_record"` // the survivors' usage
	SessionValid bool     `json:"session_valid_after"`
	LeaseValid   bool     `json:"lease_valid_after"`
}

func (r *FailoverResult) Table() Table {
	return Table{
		Title: fmt.Sprintf("cluster failover: %d workers charge %d units one at a time through %d governord processes; the leader is killed (SIGKILL) a third of the way in",
			r.Workers, r.Charges, r.Members),
		Columns: []string{"admission gap", "calls refused", "redirected", "not applied", "unknown outcome", "charges acknowledged", "charges on record", "session and lease after"},
		Rows: [][]string{{ms(r.Gap), num(r.Refused), num(r.Attempts.Redirected), num(r.Attempts.NotApplied), num(r.Attempts.Unknown),
			num(r.Acknowledged), num(r.OnRecord), fmt.Sprintf("session %s, lease %s", valid(r.SessionValid), valid(r.LeaseValid))}},
		Notes: []string{
			"The gap runs from the kill to the first acknowledgement of a charge sent after it. A refused call is one a worker saw fail; the last three columns count the attempts of the workers' client after the kill: sent on to the leader a member named, refused by a member before its log (sent to the next member), and sent without a definite answer (retried with the request id).",
		},
	}
}

func runFailover(ctx context.Context, e *env) (Result, error) {
	if e.Remote != nil {
		return nil, fmt.Errorf("%w: it starts a cluster and kills its leader", ErrNeedsOwnGovernord)
	}
	c, err := startCluster(e, clusterMembers)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	r := &FailoverResult{Members: clusterMembers, Workers: e.Sizes.FailoverWorkers, Charges: e.Sizes.FailoverCharges}
	if err := errors.Join(failover(ctx, c, r), c.stop()); err != nil {
		return nil, err
	}
	return r, nil
}

// failover runs the workers on c, kills its leader at a third of the
// charges and fills r.
func failover(ctx context.Context, c *cluster, r *FailoverResult) error {
	t, err := newTarget(clientconn.Config{Addr: strings.Join(c.bases, ",")}, c.key)
	if err != nil {
		return err
	}
	defer t.close()
	seen := &attempts{}
	s, err := firstSession(ctx, t, connect.WithInterceptors(seen))
	if err != nil {
		return err
	}
	w, err := newChargers(ctx, t, s, "failover", r.Workers, r.Charges)
	if err != nil {
		return err
	}
	w.start(ctx)
	select {
	case <-w.third:
	case <-w.ended:
		return errors.Join(fmt.Errorf("%w: the workers stopped before a third of the charges", ErrUnexpected), w.wait())
	}
	leader, err := c.leader(ctx, s.token)
	if err != nil {
		w.stop()
		return err
	}
	seen.from()
	w.faulted()
	if err := c.kill(leader); err != nil {
		w.stop()
		return err
	}
	if err := w.wait(); err != nil {
		return err
	}
	r.Gap, r.Refused, r.Acknowledged = w.gap(), w.refused.Load(), w.acked.Load()
	r.Attempts = seen.counts()
	if r.OnRecord, err = w.onRecord(ctx); err != nil {
		return err
	}
	r.SessionValid, r.LeaseValid = w.stillValid(ctx)
	return nil
}

// firstSession opens a session on a cluster that has just started, once
// it has elected a leader: within a minute.
func firstSession(ctx context.Context, t *target, opts ...connect.ClientOption) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		s, err := t.session(ctx, sessionTTL, opts...)
		if err == nil || connect.CodeOf(err) != connect.CodeUnavailable {
			return s, err
		}
		if sleep(ctx, 100*time.Millisecond); ctx.Err() != nil {
			return nil, fmt.Errorf("%w: the cluster elected no leader within a minute: %w", ErrUnexpected, err)
		}
	}
}

// cluster is governord processes that form one cluster, each with its own
// data directory under the benchmark's.
type cluster struct {
	key   string   // the admin key
	bases []string // each member's API base URL
	procs []*proc  // nil once killed or stopped
	dir   string
}

// startCluster starts n members on loopback ports that were free a moment
// ago (members must know each other's addresses before they start) and
// waits until each serves.
func startCluster(e *env, n int) (*cluster, error) {
	c := &cluster{key: randomHex(16), dir: filepath.Join(e.Dir, "cluster-"+randomHex(4))}
	addrs, err := freeAddrs(2 * n)
	if err != nil {
		return nil, err
	}
	apis, rafts := addrs[:n], addrs[n:]
	var peers strings.Builder
	for i := range n {
		fmt.Fprintf(&peers, "    - {id: n%d, raft: %q, api: %q}\n", i, rafts[i], apis[i])
	}
	for i := range n {
		file := filepath.Join(c.dir, fmt.Sprintf("n%d.yaml", i))
		yaml := configYAML(c.key, apis[i], "off", settings{}) + fmt.Sprintf(
			"cluster:\n  node_id: n%d\n  data_dir: %q\n  bootstrap: true\n  peers:\n%s", i, filepath.Join(c.dir, fmt.Sprintf("n%d", i)), peers.String())
		if err := writeFile(file, yaml); err != nil {
			return nil, errors.Join(err, c.stop())
		}
		p, err := startProc(e.Governord, "-config", file)
		if err != nil {
			return nil, errors.Join(err, c.stop())
		}
		c.procs = append(c.procs, p)
	}
	for _, p := range c.procs {
		base, err := p.serving(time.Minute)
		if err != nil {
			return nil, errors.Join(err, c.stop())
		}
		c.bases = append(c.bases, base)
	}
	return c, nil
}

// writeFile writes a configuration file, creating its directory.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

// freeAddrs returns n loopback addresses whose ports were free a moment
// ago.
func freeAddrs(n int) ([]string, error) {
	var addrs []string
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port for a cluster member: %w", err)
		}
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs, nil
}

// leader returns the index of the member that serves a read with the
// session token as the leader.
func (c *cluster) leader(ctx context.Context, token string) (int, error) {
	for i, base := range c.bases {
		if c.procs[i] == nil {
			continue
		}
		api, err := clientconn.Config{Addr: base}.API(func() string { return token })
		if err != nil {
			return 0, err
		}
		if _, err := api.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: 1})); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: no member of the cluster serves reads as its leader", ErrUnexpected)
}

// kill ends member i with SIGKILL.
func (c *cluster) kill(i int) error {
	p := c.procs[i]
	c.procs[i] = nil
	return p.signal(syscall.SIGKILL)
}

// stop ends the members still running with SIGTERM and removes their
// files; it may be called again.
func (c *cluster) stop() error {
	var errs []error
	for i, p := range c.procs {
		if p != nil {
			errs = append(errs, p.signal(syscall.SIGTERM))
			c.procs[i] = nil
		}
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

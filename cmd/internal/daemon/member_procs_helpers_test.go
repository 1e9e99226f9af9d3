package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"governor.dev/governor"
	"governor.dev/governor/internal/testbin"
)

// procCluster is three governord processes forming a cluster, each killed,
// paused, resumed and restarted from its own configuration file and data
// directory while clients call them. Its methods are safe for concurrent
// use and report errors rather than fail the test, so that a goroutine
// making faults can call them.
type procCluster struct {
	t     *testing.T
	bin   string
	dir   string
	files []string
	apis  []string

	mu     sync.Mutex      // guards the fields below
	procs  []*testbin.Proc // the process of each member, the last one started
	paused []bool          // stopped with SIGSTOP and not resumed
	dead   []bool          // killed and not restarted
}

// startProcCluster starts three members, each with extra added to its
// configuration file, and waits until each serves and one leads.
func startProcCluster(t *testing.T, extra string) *procCluster {
	t.Helper()
	pc := &procCluster{t: t, bin: governordBinary(t), dir: t.TempDir()}
	pc.files, pc.apis = clusterFiles(t, pc.dir, 3)
	for _, f := range pc.files {
		yaml, err := os.ReadFile(f)
		must(t, err)
		must(t, os.WriteFile(f, append(yaml, extra...), 0o600))
	}
	pc.procs, pc.paused, pc.dead = make([]*testbin.Proc, 3), make([]bool, 3), make([]bool, 3)
	for i := range pc.files {
		if _, err := pc.launch(i); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range pc.procs {
		if err := serving(i, p); err != nil {
			t.Fatal(err)
		}
	}
	if pc.leader(t.Context()) < 0 {
		t.Fatal("no member of the new cluster leads after 30 s")
	}
	return pc
}

// start runs member i from its file and waits until it serves.
func (pc *procCluster) start(i int) error {
	p, err := pc.launch(i)
	if err != nil {
		return err
	}
	return serving(i, p)
}

// launch runs member i from its file.
func (pc *procCluster) launch(i int) (*testbin.Proc, error) {
	p, err := testbin.Launch(pc.bin, pc.dir, nil, "-config", pc.files[i])
	if err != nil {
		return nil, fmt.Errorf("start member %d: %w", i, err)
	}
	pc.t.Cleanup(p.Kill)
	pc.mu.Lock()
	pc.procs[i], pc.paused[i], pc.dead[i] = p, false, false
	pc.mu.Unlock()
	return p, nil
}

// serving waits until member i, run as p, serves.
func serving(i int, p *testbin.Proc) error {
	if _, err := p.URL(time.Minute); err != nil {
		return fmt.Errorf("member %d: %w", i, err)
	}
	return nil
}

// kill ends member i with SIGKILL and waits until it has ended.
func (pc *procCluster) kill(i int) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.procs[i].Kill()
	pc.dead[i], pc.paused[i] = true, false
}

// pause stops member i with SIGSTOP: it holds its connections and answers
// nothing, as a process the machine stopped scheduling.
func (pc *procCluster) pause(i int) error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.paused[i] = true
	return pc.procs[i].Send(syscall.SIGSTOP)
}

// resume continues member i with SIGCONT.
func (pc *procCluster) resume(i int) error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.paused[i] = false
	return pc.procs[i].Send(syscall.SIGCONT)
}

// heal resumes every paused member and restarts every one that has ended.
func (pc *procCluster) heal() error {
	for i := range pc.procs {
		pc.mu.Lock()
		paused, dead := pc.paused[i], pc.dead[i]
		pc.mu.Unlock()
		if paused {
			if err := pc.resume(i); err != nil {
				return err
			}
		}
		if dead {
			if err := pc.start(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// leader returns the index of the member that answers as the leader,
// asking each member that is not paused for an admin session with a short
// timeout; -1 when none does within 30 s.
func (pc *procCluster) leader(ctx context.Context) int {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for i, addr := range pc.apis {
			pc.mu.Lock()
			paused := pc.paused[i]
			pc.mu.Unlock()
			if paused {
				continue
			}
			probe, cancel := context.WithTimeout(ctx, time.Second)
			_, err := newJSONAPI("http://"+addr).session(probe, testAdminKey)
			cancel()
			if err == nil {
				return i
			}
		}
	}
	return -1
}

// dial opens an SDK client of the tenant with every member's address, for
// t, trying again while governord is unavailable (a new leader may not
// have reconciled the tenants of its configuration yet) for up to a
// minute; it is closed when t ends.
func (pc *procCluster) dial(t *testing.T) *governor.Client {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		c, err := governor.Dial(ctx, governor.WithAddr(strings.Join(pc.apis, ",")), governor.WithAPIKey(testTeamKey))
		cancel()
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		if !errors.Is(err, governor.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

// newTask creates a task of c for t, detached from c's session, so that
// the test's checks find it whatever becomes of the session.
func newTask(t *testing.T, c *governor.Client, spec governor.Spec) (context.Context, *governor.Task) {
	t.Helper()
	spec.Detached = true
	tctx, task, err := c.NewTask(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return tctx, task
}

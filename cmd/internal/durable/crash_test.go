package durable

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// The crash test runs this test binary a second time as a worker process
// (crashChild), which serves 16 concurrent callers from a real record and
// prints each answer only after the record holds it. The test kills the
// worker with SIGKILL at a random moment, reopens the record and checks that
// everything acknowledged is there.

const (
	crashChildEnv = "GOVERNOR_CRASH_CHILD"
	crashTasks    = 6
	crashCap      = 4000 // each task's http quota
	crashSlots    = 2    // each task's db limit
	crashCallers  = 16
)

// ack is one acknowledged answer, as the worker printed it.
type ack struct {
	kind    byte // C consume, G grant, R release
	session engine.ID
	request string
	node    engine.ID
	lease   engine.ID
}

func parseAck(line string) (ack, bool) {
	f := strings.Fields(line)
	if len(f) != 5 {
		return ack{}, false
	}
	num := func(s string) engine.ID { v, _ := strconv.ParseUint(s, 10, 64); return engine.ID(v) }
	return ack{kind: f[0][0], session: num(f[1]), request: f[2], node: num(f[3]), lease: num(f[4])}, true
}

func TestCrashLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes")
	}
	kills := 3
	if os.Getenv("GOVERNOR_LONG") == "1" {
		kills = 20
	}
	forEachBackend(t, func(t *testing.T, url string) {
		var acks []ack
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		for round := range kills {
			acks = append(acks, runAndKill(t, url, time.Duration(300+rng.IntN(900))*time.Millisecond)...)
			verifyRecord(t, url, acks, round)
		}
	})
}

// runAndKill starts a worker on url (with env added to its environment),
// lets it serve for d after its first answer, kills it with SIGKILL and
// returns what it acknowledged. Counting from the first answer, not from
// the end of its set-up, keeps a loaded machine's slow start from leaving a
// round with nothing acknowledged to check.
func runAndKill(t *testing.T, url string, d time.Duration, env ...string) []ack {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), crashChildEnv+"="+url), env...)
	out, err := cmd.StdoutPipe()
	must(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	var acks []ack
	answered := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			// A line cut by the kill has no newline and is not an answer.
			if a, ok := parseAck(sc.Text()); ok {
				if acks = append(acks, a); len(acks) == 1 {
					close(answered)
				}
			}
		}
	}()
	select {
	case <-answered:
	case <-done:
		t.Fatalf("worker exited before it answered: %s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("worker answered nothing in 30 s: %s", stderr.String())
	}
	time.Sleep(d)
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	<-done
	_ = cmd.Wait()
	return acks
}

// verifyRecord reopens the record and checks every acknowledged answer.
func verifyRecord(t *testing.T, url string, acks []ack, round int) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, Options{URL: url, Clock: wallClock{}, Logger: quiet()})
	if err != nil {
		t.Fatalf("round %d: reopen after the kill: %v", round, err)
	}
	defer s.Close(ctx)
	e := s.Engine
	charged := make(map[engine.ID]int64)
	released := make(map[engine.ID]bool)
	granted := make(map[engine.ID]bool)
	var maxLease engine.ID
	for _, a := range acks {
		switch a.kind {
		case 'C':
			charged[a.node]++
		case 'G':
			if granted[a.lease] {
				t.Fatalf("round %d: lease id %d was handed to two holders", round, a.lease)
			}
			granted[a.lease] = true
			maxLease = max(maxLease, a.lease)
		case 'R':
			released[a.lease] = true
		}
	}
	for node, n := range charged {
		inf, _, _, err := e.Describe(&engine.Call{}, node, nil)
		must(t, err)
		q := inf.Quotas["http"]
		if q.Used < n {
			t.Fatalf("round %d: node %d used %d on record, %d charges were acknowledged", round, node, q.Used, n)
		}
		if q.Capped && q.Used > q.Cap {
			t.Fatalf("round %d: node %d used %d over its cap %d", round, node, q.Used, q.Cap)
		}
	}
	for id := range granted {
		_, err := e.Validate(&engine.Call{}, id)
		switch {
		case released[id] && err == nil:
			t.Fatalf("round %d: lease %d is live though its release was acknowledged", round, id)
		case !released[id] && err != nil && !releasedInFlight(err):
			t.Fatalf("round %d: acknowledged lease %d is neither live nor released after restart: %v", round, id, err)
		}
	}
	checkRequestsRemembered(t, s, acks, round)
	checkFencing(t, s, maxLease, round)
}

// releasedInFlight reports an acknowledged lease whose release was on record
// but not yet acknowledged when the worker died: allowed, since a call in
// flight may be on record without its answer.
func releasedInFlight(err error) bool {
	var le *engine.LeaseError
	return errors.As(err, &le) && le.Outcome == engine.OutcomeReleased
}

// checkRequestsRemembered repeats the last acknowledged consumes of each
// session: the record answers them and applies nothing.
func checkRequestsRemembered(t *testing.T, s *Store, acks []ack, round int) {
	t.Helper()
	seen := make(map[engine.ID]int)
	for i := len(acks) - 1; i >= 0; i-- {
		a := acks[i]
		if a.kind != 'C' || seen[a.session] >= 50 {
			continue
		}
		seen[a.session]++
		before := s.Engine.Seq()
		err := s.Engine.Consume(&engine.Call{Session: a.session, Request: a.request}, a.node, "http", 1)
		if err != nil || s.Engine.Seq() != before {
			t.Fatalf("round %d: request %s of session %d repeated after restart: err %v, applied %d events", round, a.request, a.session, err, s.Engine.Seq()-before)
		}
	}
}

// checkFencing takes a new lease: its id must be larger than every lease id
// ever acknowledged, so a larger id still means a later grant.
func checkFencing(t *testing.T, s *Store, maxLease engine.ID, round int) {
	t.Helper()
	e := s.Engine
	c := &engine.Call{}
	var tenant engine.NodeInfo
	must(t, do(t, s, c, func(c *engine.Call) (err error) {
		tenant, _, err = e.Ensure(c, engine.RootID, engine.Spec{Name: "fencing-check"}, nil)
		return err
	}))
	var sess engine.SessionInfo
	must(t, do(t, s, c, func(c *engine.Call) (err error) {
		sess, err = e.OpenSession(c, tenant.ID, time.Minute, tok(1_000_000+round))
		return err
	}))
	l, w, err := e.Acquire(&engine.Call{Session: sess.ID}, tenant.ID, "probe", 0)
	if err != nil || w != nil {
		t.Fatalf("round %d: probe acquire: %v", round, err)
	}
	if l.ID <= maxLease {
		t.Fatalf("round %d: a new lease got id %d, not above the largest acknowledged %d", round, l.ID, maxLease)
	}
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// crashChild is the worker process: it serves crashCallers callers until it
// is killed, printing each answer once the record holds it.
func crashChild(url string) int {
	ctx := context.Background()
	wide := os.Getenv(crashWideEnv) != ""
	every := uint64(500)
	if wide {
		every = 300
	}
	s, err := Open(ctx, Options{URL: url, Clock: wallClock{}, SnapshotEvery: every, Logger: quiet()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	w := &ackWriter{out: bufio.NewWriter(os.Stdout)}
	tenant, tasks, err := crashTree(ctx, s)
	if err == nil && wide {
		err = wideTree(ctx, s)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	var wg sync.WaitGroup
	for g := range crashCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := crashCaller(ctx, s, tenant, tasks, g, w); err != nil {
				fmt.Fprintln(os.Stderr, "caller:", err)
				os.Exit(1)
			}
		}()
	}
	wg.Wait()
	return 0
}

// crashTree finds or creates the tenant and its tasks; it is the same tree
// at every start.
func crashTree(ctx context.Context, s *Store) (engine.ID, []engine.ID, error) {
	e := s.Engine
	c := &engine.Call{}
	tenant, _, err := e.Ensure(c, engine.RootID, engine.Spec{Name: "crash", Limits: map[string]int64{"db": crashSlots * crashTasks}}, nil)
	if err != nil {
		return 0, nil, err
	}
	var tasks []engine.ID
	for i := range crashTasks {
		spec := engine.Spec{Name: fmt.Sprint("task-", i), Quotas: map[string]int64{"http": crashCap}, Limits: map[string]int64{"db": crashSlots}}
		inf, _, err := e.Ensure(c, tenant.ID, spec, nil)
		if err != nil {
			return 0, nil, err
		}
		tasks = append(tasks, inf.ID)
	}
	return tenant.ID, tasks, s.Wait(ctx, c.Seq)
}

// crashCaller opens its own session on the tenant and loops: consume with a
// request id, or take a lease and give it back.
func crashCaller(ctx context.Context, s *Store, tenant engine.ID, tasks []engine.ID, g int, w *ackWriter) error {
	c := &engine.Call{}
	var b [32]byte
	copy(b[:], fmt.Sprintf("%d-%d-%d", os.Getpid(), g, time.Now().UnixNano()))
	sess, err := s.Engine.OpenSession(c, tenant, 2*time.Second, b)
	if err != nil {
		return err
	}
	if err := s.Wait(ctx, c.Seq); err != nil {
		return err
	}
	go heartbeat(s, sess.ID)
	rng := rand.New(rand.NewPCG(uint64(g), uint64(os.Getpid())))
	for k := 0; ; k++ {
		task := tasks[rng.IntN(len(tasks))]
		if rng.IntN(3) > 0 {
			if err := crashConsume(ctx, s, sess.ID, task, fmt.Sprintf("%d-%d-%d", os.Getpid(), g, k), w); err != nil {
				return err
			}
			continue
		}
		if err := crashLease(ctx, s, sess.ID, task, w); err != nil {
			return err
		}
	}
}

func heartbeat(s *Store, id engine.ID) {
	for range time.Tick(300 * time.Millisecond) {
		if _, err := s.Engine.Heartbeat(&engine.Call{Session: id}); err != nil {
			return
		}
	}
}

func crashConsume(ctx context.Context, s *Store, sess, task engine.ID, req string, w *ackWriter) error {
	if err := s.Room(ctx); err != nil {
		return err
	}
	c := &engine.Call{Session: sess, Request: req}
	err := s.Engine.Consume(c, task, "http", 1)
	if werr := s.Wait(ctx, c.Seq); werr != nil {
		return werr
	}
	switch {
	case err == nil:
		w.line(fmt.Sprintf("C %d %s %d 0", sess, req, task))
	case !errors.Is(err, engine.ErrDenied):
		return err
	}
	return nil
}

func crashLease(ctx context.Context, s *Store, sess, task engine.ID, w *ackWriter) error {
	e := s.Engine
	c := &engine.Call{Session: sess}
	l, wt, err := e.Acquire(c, task, "db", 0)
	if err != nil {
		return err
	}
	if wt != nil {
		select {
		case g := <-wt.C():
			if g.Err != nil {
				return g.Err
			}
			l, c.Seq = g.Lease, g.Seq
		case <-time.After(50 * time.Millisecond):
			e.Abandon(&engine.Call{Session: sess}, wt)
			return nil
		}
	}
	if err := s.Wait(ctx, c.Seq); err != nil {
		return err
	}
	w.line(fmt.Sprintf("G %d - %d %d", sess, task, l.ID))
	rc := &engine.Call{Session: sess}
	if _, err := e.Release(rc, l.ID, engine.Report{}); err != nil {
		return err
	}
	if err := s.Wait(ctx, rc.Seq); err != nil {
		return err
	}
	w.line(fmt.Sprintf("R %d - %d %d", sess, task, l.ID))
	return nil
}

// ackWriter prints whole lines, one at a time, flushed at once.
type ackWriter struct {
	mu  sync.Mutex
	out *bufio.Writer
}

func (w *ackWriter) line(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.WriteString(s + "\n")
	w.out.Flush()
}

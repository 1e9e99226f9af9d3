package daemon

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"governor.dev/governor"
)

// waiting is how many acquires wait on node itself for class, as the
// leader of the cluster says.
func waiting(ctx context.Context, c *clusterAPI, token string, node uint64, class string) (int64, error) {
	var out struct {
		Node struct {
			Classes map[string]struct {
				Waiting int64 `json:"waiting,string"`
			} `json:"classes"`
		} `json:"node"`
	}
	err := c.try(ctx, func(a jsonAPI) error {
		return a.call(ctx, token, "GetNode", map[string]any{"node_id": fmt.Sprint(node)}, &out)
	})
	return out.Node.Classes[class].Waiting, err
}

// An SDK acquire queued on the leader keeps its place when the leader is
// killed with SIGKILL: the SDK sends it again, with its request id, to the
// new leader, which hands back the waiter the log kept instead of queueing
// a second one; the slot the holder then releases goes to it.
func TestSDKAcquireKeepsItsPlaceAcrossALeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three governord processes")
	}
	dir := t.TempDir()
	files, apis := clusterFiles(t, dir, 3)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		must(t, err)
		limited := strings.Replace(string(raw), "quotas: {http: 100000000}", "quotas: {http: 100000000}\n    limits: {gpu: 1}", 1)
		must(t, os.WriteFile(f, []byte(limited), 0o600))
	}
	procs := startMembers(t, dir, files)
	ctx := context.Background()
	c := newClusterAPI(apis)
	first := c.leader(ctx)
	if first < 0 {
		t.Fatal("no member answers as the leader")
	}
	if _, err := c.session(ctx, testTeamKey); err != nil { // the leader has seeded the tenants
		t.Fatal(err)
	}
	list := strings.Join(apis, ",")
	dial := func() *governor.Client {
		cl, err := governor.Dial(ctx, governor.WithAddr(list), governor.WithAPIKey(testTeamKey))
		must(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	holderCtx, _, err := dial().NewTask(ctx, governor.Spec{Name: "holder"})
	must(t, err)
	held, err := governor.Acquire(holderCtx, "gpu")
	must(t, err)
	waiterCtx, waiterTask, err := dial().NewTask(ctx, governor.Spec{Name: "waiter"})
	must(t, err)
	got := make(chan error, 1)
	go func() {
		l, err := governor.Acquire(waiterCtx, "gpu")
		if err == nil {
			err = l.Release(governor.Report{})
		}
		got <- err
	}()
	admin, err := c.session(ctx, testAdminKey)
	must(t, err)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) { // polling the queue, not a result
		n, err := waiting(ctx, c, admin, waiterTask.ID(), "gpu")
		must(t, err)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the waiter's acquire is not queued after 30 s (%d wait)", n)
		}
	}
	procs[first].Kill()
	// The SDK sends the acquire again as soon as a new leader answers; it
	// must not wait twice. 3 s leaves the retry time to land before the
	// slot is released (after it, the lease under its id answers it).
	if c.leader(ctx) < 0 {
		t.Fatal("no member leads after the kill")
	}
	admin, err = c.session(ctx, testAdminKey)
	must(t, err)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if n, err := waiting(ctx, c, admin, waiterTask.ID(), "gpu"); err == nil && n > 1 {
			t.Fatalf("the retried acquire waits a second time: %d wait", n)
		}
	}
	must(t, held.Release(governor.Report{}))
	select {
	case err := <-got:
		must(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("the acquire queued before the leader was killed got no lease within 60 s after the slot was released")
	}
	if n, err := waiting(ctx, c, admin, waiterTask.ID(), "gpu"); err != nil || n != 0 {
		t.Fatalf("%d acquires still wait on the waiter's task (%v), want 0", n, err)
	}
}

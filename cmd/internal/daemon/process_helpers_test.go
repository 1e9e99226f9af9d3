package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"governor.dev/governor/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// governordBinary builds cmd/governord once per test binary.
func governordBinary(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, "governor.dev/governor/cmd/governord")
}

// startProc runs governord with args in dir. It is killed when t ends, if
// it is still running.
func startProc(t *testing.T, dir string, env []string, args ...string) *testbin.Proc {
	t.Helper()
	return testbin.Start(t, governordBinary(t), dir, env, args...)
}

// writeConfig writes a governord configuration file in dir: loopback on
// port 0, metrics off, JSON logs, one tenant, the record at url.
func writeConfig(t *testing.T, dir, url string) string {
	t.Helper()
	path := filepath.Join(dir, "governor.yaml")
	yaml := fmt.Sprintf(`listen: 127.0.0.1:0
metrics_listen: "off"
database_url: %q
admin_key: %s
tenants:
  - name: team-a
    api_key: %s
    quotas: {http: 100000000}
reap_interval: 100ms
log: {format: json}
`, url, testAdminKey, testTeamKey)
	must(t, os.WriteFile(path, []byte(yaml), 0o600))
	return path
}

// load runs workers that each consume one unit at a time on a node of
// their own, through the JSON API with the tenant's key, counting what was
// acknowledged and what was sent.
type load struct {
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu    sync.Mutex       // guards the maps below
	acked map[uint64]int64 // node: consumes answered 200
	sent  map[uint64]int64 // node: consumes sent, answered or not
	first chan struct{}    // closed at the first acknowledgment
	once  sync.Once
}

func startLoad(t *testing.T, base string, workers int) *load {
	t.Helper()
	return startLoadOn(t, newJSONAPI(base), workers)
}

// tenantAPI is what the load and its check call: one governord's API
// (jsonAPI) or a cluster's (clusterAPI).
type tenantAPI interface {
	ensure(ctx context.Context, cred, name string) (uint64, error)
	consume(ctx context.Context, cred string, node uint64, resource string, amount int64) error
	session(ctx context.Context, key string) (string, error)
	node(ctx context.Context, token string, id uint64) (map[string]resourceUse, error)
}

// startLoadOn is startLoad through api.
func startLoadOn(t *testing.T, api tenantAPI, workers int) *load {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel, acked: map[uint64]int64{}, sent: map[uint64]int64{}, first: make(chan struct{})}
	for w := range workers {
		node, err := api.ensure(ctx, testTeamKey, fmt.Sprintf("worker-%d", w))
		must(t, err)
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for ctx.Err() == nil {
				l.mu.Lock()
				l.sent[node]++
				l.mu.Unlock()
				if err := api.consume(ctx, testTeamKey, node, "http", 1); err != nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				l.mu.Lock()
				l.acked[node]++
				l.mu.Unlock()
				l.once.Do(func() { close(l.first) })
			}
		}()
	}
	return l
}

// stop ends the workers and returns what they counted.
func (l *load) stop() (acked, sent map[uint64]int64) {
	l.cancel()
	l.done.Wait()
	return l.acked, l.sent
}

// verifyOnRecord checks, through a fresh governord's API, that every
// acknowledged consume is on record and that nothing was charged that was
// not sent.
func verifyOnRecord(t *testing.T, base string, acked, sent map[uint64]int64) {
	t.Helper()
	verifyOn(t, newJSONAPI(base), acked, sent)
}

// verifyOn is verifyOnRecord through api.
func verifyOn(t *testing.T, api tenantAPI, acked, sent map[uint64]int64) {
	t.Helper()
	ctx := context.Background()
	admin, err := api.session(ctx, testAdminKey)
	must(t, err)
	total := int64(0)
	for node, n := range acked {
		res, err := api.node(ctx, admin, node)
		must(t, err)
		used := res["http"].Used
		if used < n || used > sent[node] {
			t.Errorf("node %d: %d used on record; %d consumes were acknowledged and %d sent", node, used, n, sent[node])
		}
		total += n
	}
	if total == 0 {
		t.Fatal("nothing was acknowledged: the test proves nothing")
	}
	t.Logf("%d acknowledged consumes on %d nodes, all on record", total, len(acked))
}

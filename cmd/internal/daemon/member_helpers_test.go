package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// freeAddrs returns n loopback addresses whose ports were free a moment
// ago: a cluster's members must know each other's addresses before they
// start, so port 0 cannot be used.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	for _, ln := range lns {
		must(t, ln.Close())
	}
	return addrs
}

// clusterFiles writes the configuration file of each of n members under
// dir, each with its own data directory, and returns the files' paths and
// the members' API addresses.
func clusterFiles(t *testing.T, dir string, n int) (files, apis []string) {
	t.Helper()
	addrs := freeAddrs(t, 2*n)
	apis, rafts := addrs[:n], addrs[n:]
	peers := ""
	for i := range n {
		peers += fmt.Sprintf("    - {id: n%d, raft: %q, api: %q}\n", i, rafts[i], apis[i])
	}
	for i := range n {
		yaml := fmt.Sprintf(`listen: %q
metrics_listen: "off"
admin_key: %s
tenants:
  - name: team-a
    api_key: %s
    quotas: {http: 100000000}
reap_interval: 100ms
log: {format: json}
cluster:
  node_id: n%d
  data_dir: %q
  bootstrap: true
  peers:
%s`, apis[i], testAdminKey, testTeamKey, i, filepath.Join(dir, fmt.Sprintf("n%d", i)), peers)
		path := filepath.Join(dir, fmt.Sprintf("n%d.yaml", i))
		must(t, os.WriteFile(path, []byte(yaml), 0o600))
		files = append(files, path)
	}
	return files, apis
}

// clusterAPI calls whichever member leads: it starts at the first address,
// follows a member's Governor-Leader answer, and moves on to the next
// address when a member does not answer or knows no leader. It is safe for
// concurrent use.
type clusterAPI struct {
	apis []jsonAPI

	requests atomic.Uint64 // request ids given out

	mu  sync.Mutex
	cur int // index of the member believed to lead
}

func newClusterAPI(addrs []string) *clusterAPI {
	c := &clusterAPI{}
	for _, a := range addrs {
		c.apis = append(c.apis, newJSONAPI("http://"+a))
	}
	return c
}

// try runs f against the member believed to lead, following hints, for up
// to 20 s. Errors other than Unavailable and failed connections end it.
func (c *clusterAPI) try(ctx context.Context, f func(a jsonAPI) error) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c.mu.Lock()
		at := c.cur
		c.mu.Unlock()
		err := f(c.apis[at])
		var ce *callError
		if err == nil || (errors.As(err, &ce) && ce.Code != "unavailable") || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		c.mu.Lock()
		if c.cur == at {
			c.cur = (at + 1) % len(c.apis)
			if ce != nil && ce.Leader != "" {
				for i, a := range c.apis {
					if a.base == "http://"+ce.Leader {
						c.cur = i
					}
				}
			}
		}
		c.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
}

// leader is the index of the member that answers as the leader, -1 if none
// does within 20 s.
func (c *clusterAPI) leader(ctx context.Context) int {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for i, a := range c.apis {
			if _, err := a.session(ctx, testAdminKey); err == nil {
				return i
			}
		}
	}
	return -1
}

func (c *clusterAPI) ensure(ctx context.Context, cred, name string) (id uint64, err error) {
	err = c.try(ctx, func(a jsonAPI) error { id, err = a.ensure(ctx, cred, name); return err })
	return id, err
}

// consume sends one request id with every try, so that a consume whose
// outcome was lost with its leader is applied once however often it is
// sent.
func (c *clusterAPI) consume(ctx context.Context, cred string, node uint64, resource string, amount int64) error {
	in := map[string]any{"node_id": node, "resource": resource, "amount": amount, "request_id": fmt.Sprint("consume-", c.requests.Add(1))}
	return c.try(ctx, func(a jsonAPI) error { return a.call(ctx, cred, "Consume", in, nil) })
}

func (c *clusterAPI) session(ctx context.Context, key string) (tok string, err error) {
	err = c.try(ctx, func(a jsonAPI) error { tok, err = a.session(ctx, key); return err })
	return tok, err
}

func (c *clusterAPI) node(ctx context.Context, token string, id uint64) (res map[string]resourceUse, err error) {
	err = c.try(ctx, func(a jsonAPI) error { res, err = a.node(ctx, token, id); return err })
	return res, err
}

// total is how many consumes l has counted as acknowledged in all.
func (l *load) total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, v := range l.acked {
		n += v
	}
	return n
}

// waitFor waits up to 60 s until l has counted n acknowledged consumes.
func (l *load) waitFor(t *testing.T, n int64, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); l.total() < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d consumes acknowledged after a minute, want %d", what, l.total(), n)
		}
	}
}

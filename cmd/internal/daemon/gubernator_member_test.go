package daemon

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/config"
	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
	"governor.dev/governor/internal/testcert"
)

// guberClusterFiles is clusterFiles with the Gubernator API on, under
// team-a.
func guberClusterFiles(t *testing.T, dir string, n int) (files, apis []string) {
	t.Helper()
	files, apis = clusterFiles(t, dir, n)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		must(t, err)
		must(t, os.WriteFile(f, append(raw, guberOn...), 0o600))
	}
	return files, apis
}

const guberOn = "gubernator: {enabled: true, tenant: team-a}\n"

// hit sends one GetRateLimits of hits on key (limit 1e9 an hour) to the
// member at api, with team-a's key, and returns what remains.
func hit(ctx context.Context, api, key string, hits int64) (int64, error) {
	return hitWith(ctx, gubernatorv1connect.NewV1Client(http.DefaultClient, "http://"+api), key, hits)
}

func hitWith(ctx context.Context, c gubernatorv1connect.V1Client, key string, hits int64) (int64, error) {
	req := connect.NewRequest(&gubernatorv1.GetRateLimitsReq{Requests: []*gubernatorv1.RateLimitReq{
		{Name: "calls", UniqueKey: key, Hits: hits, Limit: 1e9, Duration: time.Hour.Milliseconds()},
	}})
	req.Header().Set("Authorization", "Bearer "+testTeamKey)
	res, err := c.GetRateLimits(ctx, req)
	if err != nil {
		return 0, err
	}
	r := res.Msg.Responses[0]
	if r.Error != "" || r.Status != gubernatorv1.Status_UNDER_LIMIT {
		return 0, fmt.Errorf("answer %v: %s", r.Status, r.Error)
	}
	return r.Remaining, nil
}

// hitSoon is hit, sent again while the cluster elects a leader or seeds
// its tenants (answers Unavailable), for up to 20 s.
func hitSoon(t *testing.T, api, key string, hits int64) int64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		left, err := hit(context.Background(), api, key, hits)
		if err == nil {
			return left
		}
		if connect.CodeOf(err) != connect.CodeUnavailable || time.Now().After(deadline) {
			t.Fatalf("GetRateLimits at %s: %v", api, err)
		}
		time.Sleep(50 * time.Millisecond) // waiting for an election or the seeding, not a result
	}
}

// A GetRateLimits sent to a member that does not lead is passed to the
// leader and charged once: the leader and the other follower see the
// same remainder.
func TestGubernatorOnAFollowerChargesOnce(t *testing.T) {
	files, apis := guberClusterFiles(t, t.TempDir(), 3)
	for _, f := range files {
		cfg, err := config.Load(f)
		must(t, err)
		startDaemon(t, cfg, Options{})
	}
	lead := newClusterAPI(apis).leader(context.Background())
	if lead < 0 {
		t.Fatal("no member answers as the leader")
	}
	hitSoon(t, apis[lead], "warm", 0)
	follower := (lead + 1) % 3
	if left := hitSoon(t, apis[follower], "k", 3); left != 1e9-3 {
		t.Fatalf("the follower answered %d left, want %d", left, int64(1e9-3))
	}
	for i, api := range apis {
		if left := hitSoon(t, api, "k", 0); left != 1e9-3 {
			t.Errorf("member %d (leader %d) answers %d left after 3 hits through a follower, want %d", i, lead, left, int64(1e9-3))
		}
	}
}

// With TLS, a follower passes the call to the leader over TLS, checking
// the leader's certificate against the members' CA.
func TestGubernatorForwardsOverTLS(t *testing.T) {
	cert := testcert.New(t, 1)
	ds, apis := tlsMembers(t, []testcert.Cert{cert, cert, cert}, guberOn)
	replicated(t, ds)
	follower := 0
	for ds[follower].member.node.Raft().State() == raft.Leader {
		follower++
	}
	c := gubernatorv1connect.NewV1Client(tlsClient(cert.Pool()), "https://"+apis[follower])
	deadline := time.Now().Add(20 * time.Second)
	for {
		left, err := hitWith(context.Background(), c, "k", 2)
		if err == nil {
			if left != 1e9-2 {
				t.Fatalf("the follower answered %d left, want %d", left, int64(1e9-2))
			}
			return
		}
		if connect.CodeOf(err) != connect.CodeUnavailable || time.Now().After(deadline) {
			t.Fatalf("GetRateLimits over TLS at a follower: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // waiting for the leader's seeding, not a result
	}
}

// guberAPI is the load's tenantAPI over the Gubernator API of a
// cluster's members: a "node" is a key, and a consume hits it, at the
// member each key last reached (the next one after an error).
type guberAPI struct {
	apis []string
	keys atomic.Uint64 // keys given out

	mu sync.Mutex     // guards at
	at map[uint64]int // key: index of the member its hits go to
}

func (g *guberAPI) ensure(context.Context, string, string) (uint64, error) {
	return g.keys.Add(1), nil
}

func (g *guberAPI) consume(ctx context.Context, _ string, key uint64, _ string, amount int64) error {
	g.mu.Lock()
	at := g.at[key]
	g.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := hit(cctx, g.apis[at%len(g.apis)], fmt.Sprint("key-", key), amount)
	if err != nil {
		g.mu.Lock()
		g.at[key] = at + 1
		g.mu.Unlock()
	}
	return err
}

func (g *guberAPI) session(context.Context, string) (string, error) { return "", nil }

// node reads what a key was charged at any live member.
func (g *guberAPI) node(ctx context.Context, _ string, key uint64) (map[string]resourceUse, error) {
	deadline := time.Now().Add(20 * time.Second)
	for at := 0; ; at++ {
		left, err := hit(ctx, g.apis[at%len(g.apis)], fmt.Sprint("key-", key), 0)
		if err == nil {
			return map[string]resourceUse{"http": {Used: 1e9 - left}}, nil
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(50 * time.Millisecond) // a member down, electing or seeding: try the next
	}
}

// Three governord processes serve the Gubernator API; callers send hits
// to every member while the leader is killed with SIGKILL. Every hit
// acknowledged, through a follower or the leader, is charged in the
// surviving cluster, and none beyond what was sent.
func TestGubernatorSurvivesLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three governord processes")
	}
	dir := t.TempDir()
	files, apis := guberClusterFiles(t, dir, 3)
	procs := startMembers(t, dir, files)
	first := newClusterAPI(apis).leader(context.Background())
	if first < 0 {
		t.Fatal("no member answers as the leader")
	}
	hitSoon(t, apis[first], "warm", 0)
	g := &guberAPI{apis: apis, at: map[uint64]int{}}
	l := startLoadOn(t, g, 6)
	l.waitFor(t, 200, "before the kill")
	procs[first].Kill()
	killedAt := l.total()
	l.waitFor(t, killedAt+200, "after the leader was killed")
	acked, sent := l.stop()
	verifyOn(t, g, acked, sent)
	t.Logf("leader %d killed; %d hits acknowledged before, %d after", first, killedAt, l.total()-killedAt)
}

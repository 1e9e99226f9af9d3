package daemon

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/config"
	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
	"governor.dev/governor/internal/testbin"
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

// guberLoad sends hits of 1, each worker on a key of its own, to the
// members in turn (the next one after an error), counting what was
// acknowledged and what was sent.
type guberLoad struct {
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu    sync.Mutex // guards the maps below
	acked map[string]int64
	sent  map[string]int64
}

func startGuberLoad(apis []string, workers int) *guberLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &guberLoad{cancel: cancel, acked: map[string]int64{}, sent: map[string]int64{}}
	for w := range workers {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			key, at := fmt.Sprint("w", w), w
			for ctx.Err() == nil {
				l.count(l.sent, key)
				cctx, cancelCall := context.WithTimeout(ctx, 5*time.Second)
				_, err := hit(cctx, apis[at%len(apis)], key, 1)
				cancelCall()
				if err != nil {
					at++
					time.Sleep(10 * time.Millisecond) // a member down or electing; move on to the next
					continue
				}
				l.count(l.acked, key)
			}
		}()
	}
	return l
}

func (l *guberLoad) count(m map[string]int64, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m[key]++
}

func (l *guberLoad) total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, v := range l.acked {
		n += v
	}
	return n
}

// waitFor waits until n hits in all were acknowledged.
func (l *guberLoad) waitFor(t *testing.T, n int64, when string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); l.total() < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d hits acknowledged in 60 s, want %d", when, l.total(), n)
		}
	}
}

func (l *guberLoad) stop() (acked, sent map[string]int64) {
	l.cancel()
	l.done.Wait()
	return l.acked, l.sent
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
	procs := make([]*testbin.Proc, len(files))
	for i, f := range files {
		procs[i] = startProc(t, dir, nil, "-config", f)
	}
	for _, p := range procs {
		p.Serving()
	}
	first := newClusterAPI(apis).leader(context.Background())
	if first < 0 {
		t.Fatal("no member answers as the leader")
	}
	hitSoon(t, apis[first], "warm", 0)
	l := startGuberLoad(apis, 6)
	l.waitFor(t, 200, "before the kill")
	procs[first].Kill()
	killedAt := l.total()
	l.waitFor(t, killedAt+200, "after the leader was killed")
	acked, sent := l.stop()
	live := apis[(first+1)%3]
	for key, n := range acked {
		charged := 1e9 - hitSoon(t, live, key, 0)
		if charged < n || charged > sent[key] {
			t.Errorf("key %s: %d hits charged, %d acknowledged, %d sent", key, charged, n, sent[key])
		}
	}
	t.Logf("leader %d killed; %d hits acknowledged before, %d after", first, killedAt, l.total()-killedAt)
}

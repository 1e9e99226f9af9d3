package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// scheduledBody is the documented example's 31 requests in one call, in
// the form Gubernator's README writes JSON: lowerCamel names, strings for
// 64-bit integers.
func scheduledBody(n int) string {
	reqs := make([]string, n)
	for i := range reqs {
		reqs[i] = `{"name":"vendor_api","uniqueKey":"shared","hits":"1","limit":"10","duration":"60000","burst":"10","algorithm":"LEAKY_BUCKET","maxWait":"120000"}`
	}
	return `{"requests":[` + strings.Join(reqs, ",") + `]}`
}

// TestGubernatorScheduledExampleWithCurl reproduces Gubernator's documented
// example with curl against governord: 10 per minute, burst 10, max_wait
// 120000, 31 requests at once. Requests 1 to 10 are admitted, 11 is
// scheduled at 6000 ms, ..., 30 at 120000, and 31 is refused with the
// 126000 it would have needed. The bookings are on record: after a restart
// 6 s later the key is still in debt, so a plain request is refused and the
// next scheduled one is booked behind the 20 slots, 120000 ms on.
func TestGubernatorScheduledExampleWithCurl(t *testing.T) {
	clock := testclock.New(guberStart)
	cfg := guberConfig("sqlite:" + filepath.Join(t.TempDir(), "governor.db"))
	d := startDaemon(t, cfg, Options{Clock: clock})
	got := curl(t, "POST", d.URL()+"/v1/GetRateLimits", testTeamKey, scheduledBody(31)).responses(t)
	if len(got) != 31 {
		t.Fatalf("%d answers, want 31", len(got))
	}
	for i, r := range got {
		n := i + 1
		var want string
		switch {
		case n <= 10:
			want = fmt.Sprintf("UNDER_LIMIT remaining=%d reset=%s retry_after=0 error=%q", 10-n, ms(guberStart.Add(time.Duration(n)*6*time.Second)), "")
		case n <= 30:
			want = fmt.Sprintf("SCHEDULED remaining=0 reset=%s retry_after=%d error=%q", ms(guberStart.Add(time.Duration(n)*6*time.Second)), (n-10)*6000, "")
		default:
			want = fmt.Sprintf("OVER_LIMIT remaining=0 reset=%s retry_after=126000 error=%q", ms(guberStart.Add(126*time.Second)), "")
		}
		if s := summary(r); s != want {
			t.Errorf("request %d: %s\n          want %s", n, s, want)
		}
	}

	// A restart replays the bookings: the key is still in debt.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must(t, d.Stop(ctx))
	clock.Advance(6 * time.Second)
	d = startDaemon(t, cfg, Options{Clock: clock})
	plain := strings.ReplaceAll(scheduledBody(1), `,"maxWait":"120000"`, "")
	if s, want := summary(curl(t, "POST", d.URL()+"/v1/GetRateLimits", testTeamKey, plain).responses(t)[0]),
		fmt.Sprintf("OVER_LIMIT remaining=0 reset=%s retry_after=0 error=%q", ms(guberStart.Add(126*time.Second)), ""); s != want {
		t.Errorf("a plain request after the restart: %s\n          want %s", s, want)
	}
	if s, want := summary(curl(t, "POST", d.URL()+"/v1/GetRateLimits", testTeamKey, scheduledBody(1)).responses(t)[0]),
		fmt.Sprintf("SCHEDULED remaining=0 reset=%s retry_after=120000 error=%q", ms(guberStart.Add(186*time.Second)), ""); s != want {
		t.Errorf("a scheduled request after the restart: %s\n          want %s", s, want)
	}
}

// TestGubernatorTokenBucketWithCurl walks a token bucket through curl:
// charges, a refusal that leaves what remains, a drained refusal, a peek,
// a caller's clock that refills nothing, the window's end, and errors per
// request beside a good request.
func TestGubernatorTokenBucketWithCurl(t *testing.T) {
	clock := testclock.New(guberStart)
	d := startDaemon(t, guberConfig(""), Options{Clock: clock})
	url := d.URL() + "/v1/GetRateLimits"
	body := func(hits int, behavior string) string {
		return fmt.Sprintf(`{"requests":[{"name":"requests_per_sec","unique_key":"account:12345","hits":%d,"limit":5,"duration":60000,"behavior":%q}]}`, hits, behavior)
	}
	end := ms(guberStart.Add(time.Minute))
	steps := []struct {
		hits           int
		behavior, want string
	}{
		{1, "BATCHING", "UNDER_LIMIT remaining=4 reset=" + end + ` retry_after=0 error=""`},
		{3, "GLOBAL", "UNDER_LIMIT remaining=1 reset=" + end + ` retry_after=0 error=""`},
		{2, "NO_BATCHING", "OVER_LIMIT remaining=1 reset=" + end + ` retry_after=0 error=""`},
		{2, "DRAIN_OVER_LIMIT", "OVER_LIMIT remaining=0 reset=" + end + ` retry_after=0 error=""`},
		{0, "BATCHING", "UNDER_LIMIT remaining=0 reset=" + end + ` retry_after=0 error=""`},
	}
	for i, s := range steps {
		if got := summary(curl(t, "POST", url, testTeamKey, body(s.hits, s.behavior)).responses(t)[0]); got != s.want {
			t.Errorf("step %d (%d hits, %s): %s\n          want %s", i, s.hits, s.behavior, got, s.want)
		}
	}
	// A caller's clock moves nothing: created_at an hour ahead refills no
	// token.
	ahead := fmt.Sprintf(`{"requests":[{"name":"requests_per_sec","unique_key":"account:12345","hits":1,"limit":5,"duration":60000,"createdAt":"%d"}]}`,
		guberStart.Add(time.Hour).UnixMilli())
	if got, want := summary(curl(t, "POST", url, testTeamKey, ahead).responses(t)[0]), "OVER_LIMIT remaining=0 reset="+end+` retry_after=0 error=""`; got != want {
		t.Errorf("created_at an hour ahead: %s\n          want %s", got, want)
	}
	clock.Advance(time.Minute)
	mixed := `{"requests":[
		{"name":"requests_per_sec","unique_key":"account:12345","hits":2,"limit":5,"duration":60000},
		{"name":"requests_per_sec","unique_key":"account:12345","hits":1,"limit":5,"duration":60000,"algorithm":"TOKEN_BUCKET","max_wait":"1000"},
		{"name":"requests_per_sec","unique_key":"account:12345","hits":1,"limit":5,"duration":60000,"behavior":64}]}`
	got := curl(t, "POST", url, testAdminKey, mixed).responses(t)
	want := []string{
		"UNDER_LIMIT remaining=3 reset=" + ms(guberStart.Add(2*time.Minute)) + ` retry_after=0 error=""`,
		`UNDER_LIMIT remaining=0 reset=0 retry_after=0 error="max_wait combines only with LEAKY_BUCKET and not with TOKEN_BUCKET; send max_wait 0 or drop TOKEN_BUCKET."`,
		`UNDER_LIMIT remaining=0 reset=0 retry_after=0 error="behavior holds flags governord does not know (64); allowed are NO_BATCHING 1, GLOBAL 2, DURATION_IS_GREGORIAN 4, RESET_REMAINING 8, MULTI_REGION 16 and DRAIN_OVER_LIMIT 32, or-ed together."`,
	}
	for i := range want {
		if s := summary(got[i]); s != want[i] {
			t.Errorf("mixed call, request %d: %s\n          want %s", i, s, want[i])
		}
	}
}

// TestGubernatorAuthAndHealthWithCurl checks who may call, and the health
// check, which needs no key.
func TestGubernatorAuthAndHealthWithCurl(t *testing.T) {
	d := startDaemon(t, guberConfig(""), Options{})
	url := d.URL() + "/v1/GetRateLimits"
	one := `{"requests":[{"name":"n","unique_key":"k","hits":1,"limit":5,"duration":1000}]}`
	tests := []struct {
		name, key string
		status    int
		want      string
	}{
		{"no key", "", 401, `{"code":16,"details":[],"message":"Missing credential: send the header Authorization: Bearer with an API key."}`},
		{"unknown key", "nobody-key-0123456789", 401, `{"code":16,"details":[],"message":"The API key matches none that governord is configured with."}`},
		{"another tenant's key", testTeamBKey, 403, `{"code":7,"details":[],"message":"The key belongs to tenant team-b; the rate limits are kept under tenant team-a: use its key or the admin key."}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := curl(t, "POST", url, tt.key, one)
			if got := jsonText(t, a.body); a.status != tt.status || got != tt.want {
				t.Errorf("got %d %s\nwant %d %s", a.status, got, tt.status, tt.want)
			}
		})
	}
	h := curl(t, "GET", d.URL()+"/v1/HealthCheck", "", "")
	if h.status != 200 || h.body["status"] != "healthy" || h.body["peer_count"] != float64(1) || h.body["advertise_address"] != d.Addr().String() {
		t.Errorf("health check: %d %s", h.status, h.raw)
	}
}

// TestGubernatorGRPCClient calls governord's port with grpc-go, as
// Gubernator's own clients do, and checks that the rate limit lives in the
// tree: team-a, then a node per name, then a node per unique_key with the
// rate cap.
func TestGubernatorGRPCClient(t *testing.T) {
	clock := testclock.New(guberStart)
	d := startDaemon(t, guberConfig(""), Options{Clock: clock})
	conn, err := grpc.NewClient(d.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	must(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+testTeamKey)
	call := func(ctx context.Context, reqs ...*pb.RateLimitReq) (*pb.GetRateLimitsResp, error) {
		out := &pb.GetRateLimitsResp{}
		return out, conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", &pb.GetRateLimitsReq{Requests: reqs}, out)
	}
	leakyReq := func(hits int64) *pb.RateLimitReq {
		return &pb.RateLimitReq{Name: "requests_per_sec", UniqueKey: "account:1", Hits: hits, Limit: 60,
			Duration: 60000, Burst: 3, Algorithm: pb.Algorithm_LEAKY_BUCKET}
	}
	owner := map[string]string{"owner": d.Addr().String()}
	at := func(d time.Duration) int64 { return guberStart.Add(d).UnixMilli() }
	steps := []struct {
		advance time.Duration
		hits    int64
		want    *pb.RateLimitResp
	}{
		{0, 1, &pb.RateLimitResp{Status: pb.Status_UNDER_LIMIT, Limit: 60, Remaining: 2, ResetTime: at(time.Second), Metadata: owner}},
		{0, 2, &pb.RateLimitResp{Status: pb.Status_UNDER_LIMIT, Limit: 60, Remaining: 0, ResetTime: at(3 * time.Second), Metadata: owner}},
		{0, 1, &pb.RateLimitResp{Status: pb.Status_OVER_LIMIT, Limit: 60, Remaining: 0, ResetTime: at(time.Second), Metadata: owner}},
		{time.Second, 1, &pb.RateLimitResp{Status: pb.Status_UNDER_LIMIT, Limit: 60, Remaining: 0, ResetTime: at(4 * time.Second), Metadata: owner}},
		{2500 * time.Millisecond, 0, &pb.RateLimitResp{Status: pb.Status_UNDER_LIMIT, Limit: 60, Remaining: 2, ResetTime: at(4 * time.Second), Metadata: owner}},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		res, err := call(authed, leakyReq(s.hits))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !proto.Equal(res.Responses[0], s.want) {
			t.Errorf("step %d: %v\n        want %v", i, res.Responses[0], s.want)
		}
	}

	res, err := call(authed, &pb.RateLimitReq{Name: "n", UniqueKey: "k", Hits: 1, Limit: 0, Duration: 1000}, leakyReq(0))
	if err != nil || res.Responses[0].Error != "limit must be 1 to 1000000000, got 0." || res.Responses[1].Error != "" {
		t.Errorf("an invalid request beside a valid one: %v %v", res, err)
	}
	if _, err := call(ctx, leakyReq(1)); status.Code(err) != codes.Unauthenticated {
		t.Errorf("without a key: %v, want Unauthenticated", err)
	}
	other := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+testTeamBKey)
	if _, err := call(other, leakyReq(1)); status.Code(err) != codes.PermissionDenied {
		t.Errorf("with team-b's key: %v, want PermissionDenied", err)
	}
	health := &pb.HealthCheckResp{}
	must(t, conn.Invoke(ctx, "/pb.gubernator.V1/HealthCheck", &pb.HealthCheckReq{}, health))
	if health.Status != "healthy" || health.PeerCount != 1 {
		t.Errorf("health %v", health)
	}

	tenant := describe(t, d.store, d.tenants["team-a"])
	if tenant.Children != 1 {
		t.Errorf("team-a has %d children, want one, requests_per_sec: the invalid request made nothing", tenant.Children)
	}
	_, groups, _, err := d.store.Engine.Describe(&engine.Call{}, d.tenants["team-a"], &engine.Page{})
	must(t, err)
	var key *engine.NodeInfo
	for _, g := range groups {
		if g.Name == "requests_per_sec" {
			_, keys, _, err := d.store.Engine.Describe(&engine.Call{}, g.ID, &engine.Page{})
			must(t, err)
			if len(keys) == 1 && keys[0].Name == "account:1" {
				key = &keys[0]
			}
		}
	}
	if key == nil {
		t.Fatalf("no node account:1 under requests_per_sec under team-a: %+v", groups)
	}
	want := engine.Rate{Limit: 60, Period: time.Minute, Burst: 3, Algorithm: engine.LeakyBucket}
	if got := key.Rates["gubernator"].Rate; got != want {
		t.Errorf("the key's rate cap is %+v, want %+v", got, want)
	}
}

// TestGubernatorTenantRateBoundsAllKeys sets, in the file, a rate on the
// tenant for the Gubernator resource: every key is charged against it too,
// so three keys of 10 a minute share the tenant's 3 a minute.
func TestGubernatorTenantRateBoundsAllKeys(t *testing.T) {
	clock := testclock.New(guberStart)
	cfg := guberConfig("")
	cfg.Tenants[0].Rates = map[string]config.Rate{config.DefaultGubernatorResource: {Limit: 3, Per: time.Minute}}
	d := startDaemon(t, cfg, Options{Clock: clock})
	url := d.URL() + "/v1/GetRateLimits"
	end := ms(guberStart.Add(time.Minute))
	want := []string{
		"UNDER_LIMIT remaining=2 reset=" + end + ` retry_after=0 error=""`,
		"UNDER_LIMIT remaining=1 reset=" + end + ` retry_after=0 error=""`,
		"UNDER_LIMIT remaining=0 reset=" + end + ` retry_after=0 error=""`,
		"OVER_LIMIT remaining=0 reset=" + end + ` retry_after=0 error=""`,
	}
	for i, key := range []string{"a", "b", "c", "d"} {
		body := fmt.Sprintf(`{"requests":[{"name":"requests_per_sec","unique_key":%q,"hits":1,"limit":10,"duration":60000}]}`, key)
		if got := summary(curl(t, "POST", url, testTeamKey, body).responses(t)[0]); got != want[i] {
			t.Errorf("key %s: %s\n          want %s", key, got, want[i])
		}
	}
}

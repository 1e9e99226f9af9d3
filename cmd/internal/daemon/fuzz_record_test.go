package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// FuzzAnyCallsLeaveARecordThatLoads is the standing rule that nothing a
// caller can send produces a record that fails to load. It drives a durable
// governord (an SQLite file, a snapshot every few events) with calls of any
// field values, extremes included, read from the fuzzer's bytes, with the
// clock moving between them; then it stops governord, loads the record
// again and checks that the state loaded is the state governord stopped
// with, that its counters hold the invariants, and that governord starts on
// it. A call may be refused, never answered with an internal error.
func FuzzAnyCallsLeaveARecordThatLoads(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		clock := testclock.New(guberStart)
		cfg := guberConfig("sqlite:" + filepath.Join(t.TempDir(), "governor.db"))
		cfg.SnapshotEvery = 3
		cfg.Gubernator.IdleTTL = time.Second
		cfg.Retention.Nodes, cfg.Retention.Tombstones = 2*time.Second, time.Second
		d, err := Start(context.Background(), cfg, Options{Logger: quietLog(), Clock: clock})
		if err != nil {
			t.Fatalf("start on a new file: %v", err)
		}
		w := newFuzzWorld(d, clock)
		w.run(t, &script{b: data})
		stopped := stopAndDump(t, d)
		checkLoads(t, cfg.DatabaseURL, clock, stopped)
		checkCounters(t, stopped)
		d, err = Start(context.Background(), cfg, Options{Logger: quietLog(), Clock: clock})
		if err != nil {
			t.Fatalf("governord does not restart on its record: %v", err)
		}
		stopAndDump(t, d)
	})
}

// fuzzSeeds are scripts that reach the calls with the numbers that once
// wrapped, so the seed corpus alone checks them in every test run. Each
// call reads its credential first (0 admin, 1 team-a, 2 team-b, 3 on the
// sessions opened), a node is an index into the ids seen (0 the scope, 1
// the root, 2 team-a, 3 on created), a number below 16 is an extreme.
func fuzzSeeds() [][]byte {
	const most, least, huge = 7, 8, 13 // indexes into extremes
	return [][]byte{
		{},
		// team-a ensures "http" and consumes the most tokens there twice.
		{opEnsure, 1, 0, 0, 0, 0, opConsume, 1, 3, 1, most, 0, 0, opConsume, 1, 3, 1, most, 0, 0, opSnapshot},
		// a session acquires with max_hold 315576000000s.
		{opSession, 1, 0, opEnsure, 3, 0, 0, 0, 0, opAcquire, 3, 3, 2, 1, huge, 0, opSnapshot},
		// the admin creates under team-a with extreme specs, then charges.
		{opCreate, 0, 2, 4, 1, 1, most, 0, 1, most, 0, most, least, 0, 1, huge, 0,
			opCreate, 0, 2, 4, 1, 1, most, 0, 0, 3, 0, 1, 1, 4, 1, 17, 0, 0, 1, 0, 0,
			opConsume, 0, 3, 1, most, 1, most, 0, 1, opEnsure, 0, 3, 0, 1, 1, most, 0},
		// caps and defaults of extreme values on the root and team-a.
		{opSetQuota, 0, 1, 1, 1, most, opSetLimit, 0, 2, 2, 1, least, opDefaults, 0, 2, 1, 1, most, 0, 0, 0, 1, 1, 0, 1, 0},
		// a session of the longest ttl, heartbeats, time moving.
		{opSession, 1, 1, huge, 0, opAdvance, 5, opHeartbeat, 3, opClock, opGuber, 1, 1, most, most, most, 0, 0, 0, 0},
		// a lease held and released with an extreme latency; a cancel.
		{opSession, 1, 0, opEnsure, 3, 0, 0, 0, 0, opAcquire, 3, 3, 2, 0, opAdvance, 4, opRelease, 3, 0, 1, most, 0, 1, opCancel, 3, 3},
		// Gubernator keys that go idle and are forgotten across snapshots.
		{opGuber, 0, 0, 1, 10, 16 + 60, 0, 0, 0, 0, opAdvance, 4, opClock, opAdvance, 4, opClock, opSnapshot,
			opGuber, 0, 1, 1, 10, 16 + 60, 0, 0, 0, 0, opAdvance, 5, opClock},
		// a rate of extreme values, a consume that books, a reset.
		{opEnsure, 1, 0, 0, 0, 0, opRate, 1, 3, 1, 4, 1, 17, 0, 0, 1, 0,
			opConsume, 1, 3, 1, 2, 1, huge, 0, 0, opReset, 1, 3, 1},
	}
}

// fuzzWorld is what a script has learned: the credentials it may use and
// the node and lease ids it has seen.
type fuzzWorld struct {
	d      *Daemon
	clock  *testclock.Clock
	client governorv1connect.GovernorServiceClient
	http   *http.Client
	creds  []string
	nodes  []uint64
	leases []uint64
}

func newFuzzWorld(d *Daemon, clock *testclock.Clock) *fuzzWorld {
	hc := &http.Client{Timeout: 10 * time.Second}
	return &fuzzWorld{
		d: d, clock: clock, http: hc,
		client: governorv1connect.NewGovernorServiceClient(hc, d.URL()),
		creds:  []string{testAdminKey, testTeamKey, testTeamBKey},
		nodes:  []uint64{0, uint64(engine.RootID), uint64(d.tenants["team-a"])},
	}
}

// The calls a script makes, one byte each.
const (
	opSession = iota
	opHeartbeat
	opCreate
	opEnsure
	opGet
	opConsume
	opAcquire
	opRelease
	opValidate
	opSetQuota
	opSetLimit
	opDefaults
	opRate
	opReset
	opCancel
	opClose
	opAdvance
	opCloseSession
	opSnapshot
	opGuber
	opClock
	opCount
)

// advances are how far one opAdvance moves the clock.
var advances = []time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second, time.Minute, 3 * time.Second, time.Hour, 25 * time.Hour}

func (w *fuzzWorld) run(t *testing.T, s *script) {
	for steps := 0; len(s.b) > 0 && steps < 64; steps++ {
		op := s.byte() % opCount
		switch op {
		case opAdvance:
			w.clock.Advance(advances[int(s.byte())%len(advances)])
		case opClock:
			time.Sleep(2 * time.Millisecond) // lets the reaper run at the time the clock shows
		case opSnapshot:
			if err := w.d.store.SnapshotNow(context.Background()); err != nil {
				t.Fatalf("snapshot: %v", err)
			}
		case opGuber:
			w.guber(t, s)
		default:
			w.call(t, op, s)
		}
	}
}

// call makes one API call with a credential the script picks and checks
// that a refusal is a proper one.
func (w *fuzzWorld) call(t *testing.T, op byte, s *script) {
	cred := w.creds[int(s.byte())%len(w.creds)]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := w.send(ctx, cred, op, s)
	if err == nil || connect.CodeOf(err) == connect.CodeDeadlineExceeded && op == opAcquire {
		return
	}
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() == connect.CodeInternal || ce.Code() == connect.CodeUnknown || ce.Code() == connect.CodeUnavailable {
		t.Fatalf("call %d: %v", op, err)
	}
}

func (w *fuzzWorld) id(s *script, ids []uint64) uint64 {
	c := s.byte()
	if c >= 200 || len(ids) == 0 {
		return uint64(s.num())
	}
	return ids[int(c)%len(ids)]
}

func (w *fuzzWorld) node(s *script) uint64 { return w.id(s, w.nodes) }

func (w *fuzzWorld) saw(n *governorv1.NodeInfo) {
	if n != nil {
		w.nodes = append(w.nodes, n.Id)
	}
}

func (w *fuzzWorld) send(ctx context.Context, cred string, op byte, s *script) error {
	switch op {
	case opSession:
		r, err := call(ctx, cred, w.client.OpenSession, &governorv1.OpenSessionRequest{Ttl: s.dur()})
		if err == nil {
			w.creds = append(w.creds, r.Token)
		}
		return err
	case opHeartbeat:
		_, err := call(ctx, cred, w.client.Heartbeat, &governorv1.HeartbeatRequest{})
		return err
	case opCloseSession:
		_, err := call(ctx, cred, w.client.CloseSession, &governorv1.CloseSessionRequest{})
		return err
	case opCreate:
		r, err := call(ctx, cred, w.client.CreateNode, &governorv1.CreateNodeRequest{ParentId: w.node(s), Spec: s.spec()})
		if err == nil {
			w.saw(r.Node)
		}
		return err
	case opEnsure:
		return w.ensure(ctx, cred, s)
	case opGet:
		_, err := call(ctx, cred, w.client.GetNode, &governorv1.GetNodeRequest{NodeId: w.node(s), IncludeChildren: s.flag()})
		return err
	case opConsume:
		_, err := call(ctx, cred, w.client.Consume, &governorv1.ConsumeRequest{NodeId: w.node(s), Resource: s.key(), Amount: s.num(), MaxWait: s.dur(), DrainOverLimit: s.flag()})
		return err
	}
	return w.sendLease(ctx, cred, op, s)
}

func (w *fuzzWorld) ensure(ctx context.Context, cred string, s *script) error {
	req := &governorv1.EnsureNodeRequest{ParentId: w.node(s), Name: s.key()}
	if s.flag() {
		req.Charge = &governorv1.Charge{Resource: s.key(), Amount: s.num()}
	}
	if s.flag() {
		req.Spec = s.spec()
	}
	r, err := call(ctx, cred, w.client.EnsureNode, req)
	if err == nil {
		w.saw(r.Node)
	}
	return err
}

func (w *fuzzWorld) sendLease(ctx context.Context, cred string, op byte, s *script) error {
	switch op {
	case opAcquire:
		actx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		r, err := call(actx, cred, w.client.Acquire, &governorv1.AcquireRequest{NodeId: w.node(s), Class: s.key(), MaxHold: s.dur()})
		if err == nil && r.Lease != nil {
			w.leases = append(w.leases, r.Lease.Id)
		}
		return err
	case opRelease:
		_, err := call(ctx, cred, w.client.Release, &governorv1.ReleaseRequest{LeaseId: w.id(s, w.leases), Latency: s.dur(), Overloaded: s.flag()})
		return err
	case opValidate:
		_, err := call(ctx, cred, w.client.Validate, &governorv1.ValidateRequest{LeaseId: w.id(s, w.leases)})
		return err
	}
	return w.sendEdit(ctx, cred, op, s)
}

func (w *fuzzWorld) sendEdit(ctx context.Context, cred string, op byte, s *script) error {
	var err error
	switch op {
	case opSetQuota:
		_, err = call(ctx, cred, w.client.SetQuota, &governorv1.SetQuotaRequest{NodeId: w.node(s), Resource: s.key(), Value: s.optional()})
	case opSetLimit:
		_, err = call(ctx, cred, w.client.SetLimit, &governorv1.SetLimitRequest{NodeId: w.node(s), Class: s.key(), Value: s.optional()})
	case opDefaults:
		_, err = call(ctx, cred, w.client.SetDefaults, &governorv1.SetDefaultsRequest{NodeId: w.node(s), Defaults: s.defaults()})
	case opRate:
		_, err = call(ctx, cred, w.client.SetRate, &governorv1.SetRateRequest{NodeId: w.node(s), Resource: s.key(), Rate: s.rate()})
	case opReset:
		_, err = call(ctx, cred, w.client.ResetRate, &governorv1.ResetRateRequest{NodeId: w.node(s), Resource: s.key()})
	case opCancel:
		_, err = call(ctx, cred, w.client.CancelNode, &governorv1.CancelNodeRequest{NodeId: w.node(s)})
	case opClose:
		_, err = call(ctx, cred, w.client.CloseNode, &governorv1.CloseNodeRequest{NodeId: w.node(s)})
	}
	return err
}

// call sends one request with cred as the bearer.
func call[Req, Resp any](ctx context.Context, cred string, rpc func(context.Context, *connect.Request[Req]) (*connect.Response[Resp], error), msg *Req) (*Resp, error) {
	req := connect.NewRequest(msg)
	req.Header().Set("Authorization", "Bearer "+cred)
	resp, err := rpc(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.Msg, nil
}

// guber sends one Gubernator-compatible request of any values; it may be
// refused with a 4xx, never answered with a 5xx.
func (w *fuzzWorld) guber(t *testing.T, s *script) {
	req := map[string]any{
		"name": s.key(), "unique_key": s.key(), "hits": fmt.Sprint(s.num()), "limit": fmt.Sprint(s.num()),
		"duration": fmt.Sprint(s.num()), "burst": fmt.Sprint(s.num()), "algorithm": int(s.byte() % 3),
		"behavior": int(s.byte() % 64), "max_wait": fmt.Sprint(s.num()),
	}
	body, err := json.Marshal(map[string]any{"requests": []any{req}})
	if err != nil {
		t.Fatal(err)
	}
	hreq, err := http.NewRequest(http.MethodPost, w.d.URL()+"/v1/GetRateLimits", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hreq.Header.Set("Authorization", "Bearer "+testTeamKey)
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := w.http.Do(hreq)
	if err != nil {
		t.Fatalf("GetRateLimits %s: %v", body, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		t.Fatalf("GetRateLimits %s: status %d", body, resp.StatusCode)
	}
}

// stopAndDump stops d and returns the state its engine stopped with: all of
// it is on record once Stop returns.
func stopAndDump(t *testing.T, d *Daemon) *engine.Snapshot {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	return d.store.Engine.Dump()
}

// checkLoads opens the record at url and checks that it holds want.
func checkLoads(t *testing.T, url string, clock engine.Clock, want *engine.Snapshot) {
	ctx := context.Background()
	st, err := durable.Open(ctx, durable.Options{URL: url, Clock: clock, Logger: quietLog()})
	if err != nil {
		t.Fatalf("the record does not load: %v", err)
	}
	got := st.Engine.Dump()
	if err := st.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	now := clock.Now().UnixNano()
	if !reflect.DeepEqual(withLiveTombs(got, now), withLiveTombs(want, now)) {
		g, _ := json.Marshal(got)
		wt, _ := json.Marshal(want)
		t.Fatalf("the record loads another state than governord stopped with:\n got %s\nwant %s", g, wt)
	}
}

// withLiveTombs is st without the tombstones whose time is up at now.
// Forgetting one is invisible and not recorded (it answers nothing either
// way), so the reaper may have forgotten one that the record still holds.
func withLiveTombs(st *engine.Snapshot, now int64) *engine.Snapshot {
	out := *st
	out.Tombs = nil
	for _, tb := range st.Tombs {
		if tb.Until > now {
			out.Tombs = append(out.Tombs, tb)
		}
	}
	return &out
}

// checkCounters checks the invariants of counters the record's own checks
// do not: nothing negative, and no node has used or holds more than its
// parent.
func checkCounters(t *testing.T, st *engine.Snapshot) {
	byID := make(map[engine.ID]*engine.NodeRec, len(st.Nodes))
	for i := range st.Nodes {
		byID[st.Nodes[i].ID] = &st.Nodes[i]
	}
	for _, n := range st.Nodes {
		p := byID[n.Parent]
		if n.Deadline < 0 || n.Created < 0 || n.Ended < 0 {
			t.Fatalf("node %d has a negative time: %+v", n.ID, n)
		}
		for r, rs := range n.Res {
			if rs.Used < 0 || rs.Own < 0 || rs.Settled < 0 || rs.Cap < 0 {
				t.Fatalf("node %d has a negative count of %s: %+v", n.ID, r, rs)
			}
			if pu := usedOf(p, r); p != nil && pu < rs.Used {
				t.Fatalf("node %d used %d of %s, more than its parent's %d", n.ID, rs.Used, r, pu)
			}
		}
		for c, cs := range n.Cls {
			if cs.Held < 0 || cs.Limit < 0 || p != nil && p.Cls[c].Held < cs.Held {
				t.Fatalf("node %d holds %+v of %s, negative or more than its parent", n.ID, cs, c)
			}
		}
	}
	for _, l := range st.Leases {
		if l.Until != 0 && l.Until < l.Granted {
			t.Fatalf("lease %d runs out at %d, before it was granted at %d", l.ID, l.Until, l.Granted)
		}
	}
}

// usedOf is what n has used of resource r: 0 if n is nil or holds no r.
func usedOf(n *engine.NodeRec, r string) int64 {
	if n == nil || n.Res[r] == nil {
		return 0
	}
	return n.Res[r].Used
}

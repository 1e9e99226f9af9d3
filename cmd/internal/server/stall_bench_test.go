package server

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/stallbench"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// stallChildren is how many children the wide node of
// BenchmarkWideTenantOverTheAPI has; stallRest is how long the wide tenant
// rests between building it and reading it.
const (
	stallChildren = 100_000
	stallRest     = 500 * time.Millisecond
)

// stallFloorBusy is how long BenchmarkStallFloorOverTheAPI's busy window
// lasts: about as long as BenchmarkWideTenantOverTheAPI's on memory.
const stallFloorBusy = 400 * time.Millisecond

// BenchmarkWideTenantOverTheAPI is issue 14's stall target as a user of
// governord sees it: tenant a consumes over the API every millisecond (open
// loop) while tenant b loops: its node of 100,000 children is built
// (straight into the engine, which is not measured: over the API it takes
// most of a minute), the snapshot its events asked for is saved and its
// garbage collected, b rests (a quiet window), then reads every page of the
// children over the API, as a screen scrolling through them would, cancels
// the node over the API and, once its retention has passed, has the reaper
// remove it (a busy window). busy/quiet is the ratio of a's consume p99 in
// the two kinds of window; the issue sets it at most 2. It runs on the
// default record (sqlite), where a's consumes wait for their commits, and
// on memory, where what a waits for is the processors and the engine lock
// alone. Tenant b is a program of its own, as a tenant is (the test binary
// again: wideClientEnv), so that what its client costs (decoding the pages,
// collecting their garbage) is not governord's.
// BenchmarkStallFloorOverTheAPI is the ratio to read it against, and
// BenchmarkWideTreeStall in the engine measures the same without the API,
// against a consume of a microsecond.
func BenchmarkWideTenantOverTheAPI(b *testing.B) {
	for _, rec := range []struct {
		name string
		url  func() string
	}{
		{"memory", func() string { return "" }},
		{"sqlite", func() string { return "sqlite:" + filepath.Join(b.TempDir(), "governor.db") }},
	} {
		b.Run(rec.name, func(b *testing.B) { benchWideTenantOverTheAPI(b, rec.url()) })
	}
}

func benchWideTenantOverTheAPI(b *testing.B, url string) {
	e, owner, task := benchEnv(b, url)
	quiet, qs := e.session(keyA)
	eng := e.store.Engine
	set := eng.Settings()
	set.NodeRetention = time.Second
	settle(b, e, func(c *engine.Call) error { return eng.Configure(c, set) })
	wideSession, sess := e.session(keyB)
	ws := engine.ID(sess.SessionId)
	wide := startWideClient(b)
	ctx := context.Background()
	b.ResetTimer()
	stallbench.RunWith(b, func(w *stallbench.Windows, n int) {
		// each loop moves the clock on past the retention the reaper waits
		// for: the sessions renew, as their clients' heartbeats would, or
		// they end once the loops have moved it past their TTL
		for _, cl := range []governorv1connect.GovernorServiceClient{owner, quiet, wideSession} {
			if err := call(cl.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))); err != nil {
				b.Fatal(err)
			}
		}
		parent, _ := e.wideNode(ws, fmt.Sprint("wide", n), stallChildren)
		// the snapshot the build asked for is taken now, not in a window
		if err := e.store.SnapshotNow(ctx); err != nil {
			b.Fatal(err)
		}
		w.Settle(stallRest)
		w.Rest(stallRest)
		from := w.Begin()
		read, err := wide.describeAndCancel(e.http.URL, sess.Token, uint64(parent))
		if err != nil {
			b.Fatal(err)
		}
		if read != stallChildren {
			b.Fatalf("the pages held %d children, want %d", read, stallChildren)
		}
		e.clock.Advance(2 * time.Second)
		settle(b, e, func(c *engine.Call) error { eng.Reap(c); return nil })
		w.Busy(from)
		if nodes := eng.Stats().Nodes; nodes > 10 {
			b.Errorf("the reaper left %d nodes in the tree past their retention", nodes)
		}
	}, quietProber(b, e.http.URL, qs.Token, task, time.Millisecond))
}

// BenchmarkStallFloorOverTheAPI is BenchmarkWideTenantOverTheAPI/memory
// with a busy window in which a goroutine spins for stallFloorBusy without
// calling governord: the ratio that a goroutine competing for the
// processors, never for the engine, makes over the API on this machine as
// loaded at the time. BenchmarkWideTenantOverTheAPI's ratio reads against
// it, as BenchmarkWideTreeStall's reads against the engine's
// BenchmarkStallFloor.
func BenchmarkStallFloorOverTheAPI(b *testing.B) {
	e, _, task := benchEnv(b, "")
	_, qs := e.session(keyA)
	b.ResetTimer()
	stallbench.RunWith(b, func(w *stallbench.Windows, _ int) {
		w.Settle(stallRest)
		w.Rest(stallRest)
		from := w.Begin()
		for time.Since(from) < stallFloorBusy {
		}
		w.Busy(from)
	}, quietProber(b, e.http.URL, qs.Token, task, time.Millisecond))
}

// consumeProbe is the quiet tenant's call in the stall benchmarks: a
// consume of 1 on task over the API.
func consumeProbe(quiet governorv1connect.GovernorServiceClient, task uint64) func() error {
	return func() error {
		req := &governorv1.ConsumeRequest{NodeId: task, Resource: "req", Amount: 1}
		return call(quiet.Consume(context.Background(), connect.NewRequest(req)))
	}
}

// settle makes one engine call as the daemon would, and waits until the
// record holds what it did.
func settle(b *testing.B, e *env, do func(c *engine.Call) error) {
	c := &engine.Call{}
	if err := do(c); err != nil {
		b.Fatal(err)
	}
	if err := e.store.Wait(context.Background(), c.Seq); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDescribePage reads one page of 1,000 children over the API, as
// BenchmarkWideTenantOverTheAPI's wide tenant does a hundred times a loop,
// through a client that accepts gzip (as the Connect and gRPC clients do):
// cpu-µs/call is what a page costs the server and the client in all, most
// of it compressing the answer.
func BenchmarkDescribePage(b *testing.B) {
	e, _, _ := benchEnv(b, "")
	wide, sess := e.session(keyB)
	parent, _ := e.wideNode(engine.ID(sess.SessionId), "wide", engine.DefaultPageSize)
	req := connect.NewRequest(&governorv1.GetNodeRequest{NodeId: uint64(parent), IncludeChildren: true})
	run(b, 1, func() error {
		res, err := wide.GetNode(context.Background(), req)
		if err == nil && len(res.Msg.Children) != engine.DefaultPageSize {
			err = fmt.Errorf("a page of %d children, want %d", len(res.Msg.Children), engine.DefaultPageSize)
		}
		return err
	})
}

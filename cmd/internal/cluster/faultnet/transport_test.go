package faultnet

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// kind is an exchange raft makes, as a call from a to b.
type kind struct {
	name string
	call func(a *Transport) error
}

// via names where b receives the request: heartbeats go to the heartbeat
// handler, everything else to the consumer channel.
func (k kind) via() string {
	if k.name == "Heartbeat" {
		return "handler"
	}
	return "consumer"
}

var kinds = []kind{
	{"AppendEntries", func(a *Transport) error {
		return a.AppendEntries("b", "b", &raft.AppendEntriesRequest{Term: 1, PrevLogEntry: 1}, new(raft.AppendEntriesResponse))
	}},
	{"Heartbeat", func(a *Transport) error {
		req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{Addr: []byte("a")}, Term: 1}
		return a.AppendEntries("b", "b", req, new(raft.AppendEntriesResponse))
	}},
	{"Pipeline", pipelined},
	{"RequestVote", func(a *Transport) error {
		return a.RequestVote("b", "b", &raft.RequestVoteRequest{Term: 1}, new(raft.RequestVoteResponse))
	}},
	{"RequestPreVote", func(a *Transport) error {
		return a.RequestPreVote("b", "b", &raft.RequestPreVoteRequest{Term: 1}, new(raft.RequestPreVoteResponse))
	}},
	{"InstallSnapshot", func(a *Transport) error {
		data := bytes.NewReader([]byte("snapshot"))
		return a.InstallSnapshot("b", "b", &raft.InstallSnapshotRequest{Term: 1, Size: 8}, new(raft.InstallSnapshotResponse), data)
	}},
	{"TimeoutNow", func(a *Transport) error {
		return a.TimeoutNow("b", "b", &raft.TimeoutNowRequest{}, new(raft.TimeoutNowResponse))
	}},
}

func pipelined(a *Transport) error {
	p, err := a.AppendEntriesPipeline("b", "b")
	if err != nil {
		return err
	}
	defer p.Close()
	resp := new(raft.AppendEntriesResponse)
	f, err := p.AppendEntries(&raft.AppendEntriesRequest{Term: 1, PrevLogEntry: 1}, resp)
	if err != nil {
		return err
	}
	done := <-p.Consumer()
	if done != f {
		return errors.New("pipeline completed another future")
	}
	if err := f.Error(); err != nil {
		return err
	}
	if !resp.Success {
		return errors.New("pipeline gave no response")
	}
	return nil
}

// TestEveryKindHonoursFaults sends each kind of exchange through each fault
// and checks both whether the call fails and whether the peer saw it: a lost
// request never reaches the peer, a lost reply reaches it and still fails.
func TestEveryKindHonoursFaults(t *testing.T) {
	faults := []struct {
		name    string
		apply   func(n *Net) error
		fails   bool
		reached bool
	}{
		{"healthy", func(*Net) error { return nil }, false, true},
		{"isolate receiver", func(n *Net) error { return n.Isolate("b") }, true, false},
		{"isolate sender", func(n *Net) error { return n.Isolate("a") }, true, false},
		{"partition", func(n *Net) error { return n.Partition([]raft.ServerAddress{"a"}, []raft.ServerAddress{"b"}) }, true, false},
		{"cut request", func(n *Net) error { return n.Cut("a", "b") }, true, false},
		{"cut reply", func(n *Net) error { return n.Cut("b", "a") }, true, true},
		{"lose requests", func(n *Net) error { return n.Lose("a", "b", 1) }, true, false},
		{"lose replies", func(n *Net) error { return n.Lose("b", "a", 1) }, true, true},
		{"lose everything", func(n *Net) error { return n.LoseAll(1) }, true, false},
		{"healed", func(n *Net) error { _ = n.Isolate("b"); _ = n.LoseAll(1); n.Heal(); return nil }, false, true},
	}
	for _, kind := range kinds {
		for _, fault := range faults {
			t.Run(kind.name+"/"+fault.name, func(t *testing.T) {
				n, a, seen := pair(t)
				if err := fault.apply(n); err != nil {
					t.Fatal(err)
				}
				err := kind.call(a)
				if fault.fails != (err != nil) {
					t.Fatalf("call error = %v, want failure %v", err, fault.fails)
				}
				if fault.fails && !errors.Is(err, ErrDropped) {
					t.Fatalf("call error = %v, want one wrapping ErrDropped", err)
				}
				if got := len(seen); got != boolInt(fault.reached) {
					t.Fatalf("peer saw %d requests, want %d", got, boolInt(fault.reached))
				}
				if fault.reached {
					if via, want := <-seen, kind.via(); via != want {
						t.Fatalf("request went to the %s, want the %s", via, want)
					}
				}
			})
		}
	}
}

// TestDelayHoldsEveryLeg checks that a delayed route holds the request, and
// a delay of every route holds the request and the reply.
func TestDelayHoldsEveryLeg(t *testing.T) {
	const d = 40 * time.Millisecond
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			n, a, _ := pair(t)
			if err := n.Delay("a", "b", d, 0); err != nil {
				t.Fatal(err)
			}
			if err := n.DelayAll(d, 0); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := kind.call(a); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < 3*d {
				t.Fatalf("call took %v; a request delayed twice and a reply once take at least %v", took, 3*d)
			}
		})
	}
}

// TestBadFaultsChangeNothing checks that faults naming unknown nodes, a node
// twice, or impossible numbers are refused and leave the network healthy.
func TestBadFaultsChangeNothing(t *testing.T) {
	bad := []struct {
		name  string
		apply func(n *Net) error
	}{
		{"isolate unknown", func(n *Net) error { return n.Isolate("z") }},
		{"cut to itself", func(n *Net) error { return n.Cut("a", "a") }},
		{"cut unknown", func(n *Net) error { return n.Cut("a", "z") }},
		{"partition twice", func(n *Net) error { return n.Partition([]raft.ServerAddress{"a", "b"}, []raft.ServerAddress{"b"}) }},
		{"partition missing", func(n *Net) error { return n.Partition([]raft.ServerAddress{"a"}) }},
		{"partition unknown", func(n *Net) error { return n.Partition([]raft.ServerAddress{"a", "b"}, []raft.ServerAddress{"z"}) }},
		{"negative delay", func(n *Net) error { return n.Delay("a", "b", -time.Second, 0) }},
		{"negative jitter", func(n *Net) error { return n.DelayAll(0, -time.Second) }},
		{"loss above one", func(n *Net) error { return n.Lose("a", "b", 1.5) }},
		{"loss not a number", func(n *Net) error { return n.LoseAll(math.NaN()) }},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			n, a, seen := pair(t)
			if err := b.apply(n); err == nil {
				t.Fatal("fault accepted")
			}
			for _, kind := range kinds {
				if err := kind.call(a); err != nil {
					t.Fatalf("%s after a refused fault: %v", kind.name, err)
				}
			}
			if len(seen) != len(kinds) {
				t.Fatalf("peer saw %d requests, want %d", len(seen), len(kinds))
			}
		})
	}
	n := New(1, time.Second)
	if _, err := n.Transport("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Transport("a"); err == nil {
		t.Fatal("second transport at one address accepted")
	}
}

// pair returns a network of two transports, a and b, where b answers every
// request with success and reports each request it saw on the channel.
func pair(t *testing.T) (*Net, *Transport, chan string) {
	t.Helper()
	n := New(1, 2*time.Second)
	a, err := n.Transport("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.Transport("b")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 64)
	answer := func(via string, rpc raft.RPC) {
		seen <- via
		rpc.Respond(success(rpc))
	}
	b.SetHeartbeatHandler(func(rpc raft.RPC) { answer("handler", rpc) })
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case rpc := <-b.Consumer():
				answer("consumer", rpc)
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		_ = a.Close()
		_ = b.Close()
	})
	return n, a, seen
}

func success(rpc raft.RPC) (any, error) {
	switch rpc.Command.(type) {
	case *raft.AppendEntriesRequest:
		return &raft.AppendEntriesResponse{Success: true}, nil
	case *raft.RequestVoteRequest:
		return &raft.RequestVoteResponse{Granted: true}, nil
	case *raft.RequestPreVoteRequest:
		return &raft.RequestPreVoteResponse{Granted: true}, nil
	case *raft.InstallSnapshotRequest:
		if _, err := io.Copy(io.Discard, rpc.Reader); err != nil {
			return nil, err
		}
		return &raft.InstallSnapshotResponse{Success: true}, nil
	case *raft.TimeoutNowRequest:
		return &raft.TimeoutNowResponse{}, nil
	}
	return nil, errors.New("unexpected request")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCutDropsMessagesOnTheirWay cuts a route while a request travels it:
// the request never arrives, as over a cable pulled mid-flight.
func TestCutDropsMessagesOnTheirWay(t *testing.T) {
	n, a, seen := pair(t)
	if err := n.Delay("a", "b", 300*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- a.RequestVote("b", "b", &raft.RequestVoteRequest{Term: 1}, new(raft.RequestVoteResponse))
	}()
	time.Sleep(50 * time.Millisecond) // let the request leave; were it late, the cut drops it when it leaves
	if err := n.Cut("a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrDropped) {
		t.Fatalf("call error = %v, want one wrapping ErrDropped", err)
	}
	if len(seen) != 0 {
		t.Fatal("the peer saw a request cut on its way")
	}
}

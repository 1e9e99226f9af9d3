package cluster

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// BenchmarkClusterConsume charges one token per call through a 3-member
// cluster in this process, from 64 and 256 concurrent callers, each with a
// session of its own, and reports consumes per second, for each of the
// deployments: "mem" with the tests' raft config, "disk+tcp" with the
// config governord runs with (DefaultRaftConfig). "raft-alone" is the
// baseline for disk+tcp: raft as disk+tcp runs it, over an FSM that does
// nothing, applying a consume's log form; "raft-default" is the same with
// raft's default config over a bare raft-wal store. Run it with a fixed count,
// e.g. -benchtime 20000x.
func BenchmarkClusterConsume(b *testing.B) {
	for _, d := range deployments {
		for _, callers := range []int{64, 256} {
			b.Run(fmt.Sprintf("%s/callers=%d", d.name, callers), func(b *testing.B) {
				rc := testRaftConfig()
				if d.name != "mem" {
					rc = nil
				}
				benchConsume(b, d.open(b, rc), callers)
			})
		}
	}
	for _, tuned := range []bool{true, false} {
		for _, callers := range []int{64, 256} {
			name := map[bool]string{true: "raft-alone", false: "raft-default"}[tuned]
			b.Run(fmt.Sprintf("%s/callers=%d", name, callers), func(b *testing.B) {
				r := newBareCluster(b, 3, tuned)
				data := (&Command{Op: OpConsume, Now: time.Now().UnixNano(), Session: 1 << 40, Target: 1 << 20, Name: "tokens", Amount: 1}).Encode()
				callConcurrently(b, callers, func(int) error { return r.Apply(data, 0).Error() })
			})
		}
	}
}

func benchConsume(b *testing.B, tc *testCluster, callers int) {
	l := tc.leader()
	nd, err := l.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "bench", Detached: true})
	if err != nil {
		b.Fatal(err)
	}
	sessions := make([]engine.ID, callers)
	for i := range sessions {
		s, err := l.OpenSession(&engine.Call{}, engine.RootID, time.Hour, [32]byte{byte(i), byte(i >> 8), 1})
		if err != nil {
			b.Fatal(err)
		}
		sessions[i] = s.ID
	}
	callConcurrently(b, callers, func(i int) error {
		return l.Consume(&engine.Call{Session: sessions[i]}, nd.ID, "tokens", 1)
	})
	if got := used(b, l, nd.ID); got != int64(b.N) {
		b.Fatalf("%d consumes acknowledged, %d tokens used", b.N, got)
	}
}

// callConcurrently makes b.N calls of call from callers goroutines (call
// gets the caller's number) and reports calls per second as consumes/s and
// the process's CPU time per call (every member's and the callers') as
// cpu-us/consume, which the machine's other work disturbs less; it fails b
// if a call fails.
func callConcurrently(b *testing.B, callers int, call func(caller int) error) {
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	var failed firstError
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime(b)
	for i := range callers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := call(i); err != nil {
					failed.set(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "consumes/s")
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-us/consume")
	if err := failed.get(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCommandPath is one consume's own cost in a replica, without
// raft: the leader's stamping and encoding, and the replica's decoding and
// applying it (every member applies every command). Its allocs/op are not
// noisy, unlike BenchmarkClusterConsume's rates.
func BenchmarkCommandPath(b *testing.B) {
	f := NewFSM()
	at := time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	index := uint64(0)
	apply := func(c *Command) *Result {
		index++
		return f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: c.Encode()}).(*Result)
	}
	s := apply(&Command{Op: OpOpenSession, Now: at, Target: engine.RootID, Span: time.Hour, Token: [32]byte{1}}).Session
	nd := apply(&Command{Op: OpCreate, Now: at, Target: engine.RootID, Spec: &engine.Spec{Name: "bench", Detached: true}}).Node
	b.ReportAllocs()
	for b.Loop() {
		if r := apply(&Command{Op: OpConsume, Now: at, Session: s.ID, Target: nd.ID, Name: "tokens", Amount: 1}); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

// cpuTime is the CPU time the process used so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// failoverRaftConfig is governord's raft config (DefaultRaftConfig) with
// the heartbeat and election timeouts of 300 ms the failover targets are
// set for.
func failoverRaftConfig() *raft.Config {
	rc := DefaultRaftConfig()
	rc.HeartbeatTimeout = 300 * time.Millisecond
	rc.ElectionTimeout = 300 * time.Millisecond
	rc.LeaderLeaseTimeout = 150 * time.Millisecond
	return rc
}

// failoverCallers is how many callers keep consuming through a failover.
const failoverCallers = 16

// BenchmarkClusterFailover measures, for each deployment, how long consumes
// stop being acknowledged when the leader crashes (cut off and shut down)
// or hands its leadership over (planned transfer), with heartbeat and
// election timeouts of 300 ms, while 16 callers keep consuming (and one
// more joins at the fault): from the fault to the first acknowledged
// consume a caller sent after it. A refused caller goes to the leader the
// refusal names, or pauses 1 ms and tries the next member. Each iteration
// builds a new cluster, so run it with a small count:
//
//	go test -run '^$' -bench BenchmarkClusterFailover -benchtime 20x ./internal/cluster
//
// It reports the median and the p99 gap (over 20 iterations, the slowest)
// in milliseconds; per failover, from the fault to that first
// acknowledgement: the calls redirected (a member answered *ErrNotLeader
// naming another live member as the leader: the client, internal/clientconn,
// sends the call there within the same call, so its caller sees nothing),
// the calls refused (every other *ErrNotLeader: the answer names no leader
// or the member itself, so a client must pause and try elsewhere, and
// the SDK's caller sees the refusal when its retries run out), and those
// of unknown outcome; and the calls on the crashed member that never
// returned.
// It fails if the cluster holds fewer tokens used than consumes were
// acknowledged or, when every call returned, more than were acknowledged
// or of unknown outcome.
func BenchmarkClusterFailover(b *testing.B) {
	for _, d := range deployments {
		for _, kind := range []string{"crash", "transfer"} {
			b.Run(d.name+"/"+kind, func(b *testing.B) {
				gaps := make([]time.Duration, 0, b.N)
				var redirected, refused, unknown, stuck int64
				for range b.N {
					b.StopTimer()
					r := failover(b, d.open(b, failoverRaftConfig()), kind == "crash")
					gaps = append(gaps, r.gap)
					redirected += r.redirected
					refused += r.refused
					unknown += r.unknown
					stuck += r.stuck
				}
				slices.Sort(gaps)
				ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
				b.ReportMetric(ms(gaps[(len(gaps)-1)/2]), "ms-median")
				b.ReportMetric(ms(gaps[(len(gaps)*99+99)/100-1]), "ms-p99")
				b.ReportMetric(float64(redirected)/float64(b.N), "redirected/failover")
				b.ReportMetric(float64(refused)/float64(b.N), "refused/failover")
				b.ReportMetric(float64(unknown)/float64(b.N), "unknown/failover")
				b.ReportMetric(float64(stuck)/float64(b.N), "unanswered/failover")
			})
		}
	}
}

// failoverResult is what one failover measured.
type failoverResult struct {
	gap                                 time.Duration
	redirected, refused, unknown, stuck int64
}

// failover runs callers against tc's leader, crashes the leader or has it
// transfer its leadership, and returns once a consume sent after the fault
// was acknowledged; it then checks that nothing acknowledged was lost and
// shuts tc down.
func failover(b *testing.B, tc *testCluster, crash bool) failoverResult {
	l, li, nd := settled(b, tc)
	ld := &load{nodes: slices.Clone(tc.nodes), byAPI: make(map[string]int), target: li, resumed: make(chan struct{})}
	for i := range ld.nodes {
		ld.byAPI[tc.api[serverID(i)]] = i
	}
	ld.dead.Store(-1)
	ld.fault.Store(-1)
	ld.base = time.Now()
	var wg sync.WaitGroup
	for range failoverCallers {
		wg.Go(func() { ld.call(nd.ID) })
	}
	for ld.acked.Load() < 4*failoverCallers {
		time.Sleep(time.Millisecond) // letting the load reach a steady state, not waiting for a result
	}
	b.StartTimer()
	ld.fault.Store(int64(time.Since(ld.base)))
	if crash {
		ld.dead.Store(int32(li))
		if tc.trans != nil {
			tc.kill(li)
		} else {
			_ = tc.nodes[li].Shutdown()
			tc.nodes[li] = nil
		}
	} else if _, err := l.TransferLeadership(""); err != nil {
		b.Fatal(err)
	}
	// One more caller joins now, so a call is sent after the fault even if
	// every other caller waits on the crashed member.
	wg.Go(func() { ld.call(nd.ID) })
	select {
	case <-ld.resumed:
	case <-time.After(30 * time.Second):
		b.Fatal("no consume acknowledged within 30 s of the fault")
	}
	b.StopTimer()
	ld.stop.Store(true)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	var stuck int64
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		// raft drops the futures of commands it queued for its FSM when it
		// shuts down: a call on the crashed member may never return.
		stuck = ld.pending.Load()
	}
	acked, unknown := ld.acked.Load(), ld.unknown.Load()
	got := used(b, tc.leader(), nd.ID)
	if got < acked || (stuck == 0 && got > acked+unknown) {
		b.Fatalf("%d consumes acknowledged, %d of unknown outcome and %d never answered, %d tokens used", acked, unknown, stuck, got)
	}
	tc.shutdown()
	return failoverResult{gap: time.Duration(ld.first.Load() - ld.fault.Load()),
		redirected: ld.redirectedAfter.Load(), refused: ld.refusedAfter.Load(), unknown: ld.unknownAfter.Load(), stuck: stuck}
}

// settled creates the node the callers charge on whichever member leads,
// again with the same request id while a young cluster's leadership
// still moves (on a loaded machine an election can follow the first),
// and returns the member that took it.
func settled(b *testing.B, tc *testCluster) (*Node, int, engine.NodeInfo) {
	for {
		l, li := tc.leaderIndex()
		nd, err := l.Create(&engine.Call{Request: "f"}, engine.RootID, engine.Spec{Name: "f", Detached: true})
		var nl *ErrNotLeader
		switch {
		case err == nil:
			return l, li, nd
		case !errors.Is(err, ErrUnknownOutcome) && !errors.As(err, &nl):
			b.Fatal(err)
		}
	}
}

// load is a set of callers that consume one token per call on the member
// they believe leads, and follow the leader hint when refused.
type load struct {
	nodes  []*Node
	byAPI  map[string]int // member index by API address
	target int            // where callers start
	base   time.Time      // times below are nanoseconds since base

	dead  atomic.Int32 // index of the crashed member, -1 for none
	fault atomic.Int64 // when the fault happened, -1 before
	first atomic.Int64 // when the first consume sent after the fault was acknowledged
	once  sync.Once
	stop  atomic.Bool

	resumed                    chan struct{} // closed at first
	acked, unknown             atomic.Int64  // over the whole run
	pending                    atomic.Int64  // calls not answered yet
	redirectedAfter            atomic.Int64  // from the fault on, and the two below
	refusedAfter, unknownAfter atomic.Int64
}

// call is one caller's loop.
func (ld *load) call(id engine.ID) {
	at := ld.target
	for !ld.stop.Load() {
		sent := int64(time.Since(ld.base))
		after := ld.fault.Load() >= 0 && sent >= ld.fault.Load()
		ld.pending.Add(1)
		err := ld.nodes[at].Consume(&engine.Call{}, id, "tokens", 1)
		ld.pending.Add(-1)
		var nl *ErrNotLeader
		switch {
		case err == nil:
			ld.acked.Add(1)
			if after {
				ld.once.Do(func() {
					ld.first.Store(int64(time.Since(ld.base)))
					close(ld.resumed)
				})
			}
		case errors.As(err, &nl):
			next := ld.next(at, nl.Leader)
			if i, named := ld.byAPI[nl.Leader]; after && named && i == next && next != at {
				ld.redirectedAfter.Add(1)
			} else if after {
				ld.refusedAfter.Add(1)
			}
			at = next
		default:
			ld.unknown.Add(1)
			if after {
				ld.unknownAfter.Add(1)
			}
			at = ld.next(at, "")
		}
	}
}

// next is the member to call after member at refused a call: the leader
// it named, or after a millisecond's pause the next live member.
func (ld *load) next(at int, hint string) int {
	if i, ok := ld.byAPI[hint]; ok && i != at && i != int(ld.dead.Load()) {
		return i
	}
	time.Sleep(time.Millisecond) // a client's pause before it tries elsewhere
	for {
		at = (at + 1) % len(ld.nodes)
		if at != int(ld.dead.Load()) {
			return at
		}
	}
}

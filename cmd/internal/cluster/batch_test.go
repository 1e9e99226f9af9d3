package cluster

import (
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// TestBatchAppliesAsItsCommandsOneByOne regroups a workload's log so that
// runs of consumes are batches: a replica fed that log must end identical
// to one fed each command as an entry of its own, though each command of a
// batch has its own time (some earlier than the one before).
func TestBatchAppliesAsItsCommandsOneByOne(t *testing.T) {
	for seed := range uint64(6) {
		a, b := NewFSM(), NewFSM()
		log := drive(t, a, newWorkload(seed), 1, 3000)
		batched := 0
		for _, e := range regroup(t, log, int(seed)%4+2) {
			r := b.Apply(&raft.Log{Index: e.index, Type: raft.LogCommand, Data: e.data}).(*Result)
			if n := len(r.Batch); n > 0 {
				batched += n
				for _, sub := range r.Batch {
					if sub == nil {
						t.Fatalf("seed %d: a batch of %d answered a nil result", seed, n)
					}
				}
			}
		}
		if batched < 300 {
			t.Fatalf("seed %d: only %d commands went in batches; the test should batch many", seed, batched)
		}
		if sa, sb := a.Checksum(), b.Checksum(); sa != sb {
			t.Fatalf("seed %d: checksums differ: %x one by one, %x batched", seed, sa, sb)
		}
		if !reflect.DeepEqual(a.Engine().Dump(), b.Engine().Dump()) {
			t.Fatalf("seed %d: dumps differ", seed)
		}
		if a.Engine().Seq() != b.Engine().Seq() {
			t.Fatalf("seed %d: %d events one by one, %d batched", seed, a.Engine().Seq(), b.Engine().Seq())
		}
	}
}

type entry struct {
	index uint64
	data  []byte
}

// regroup puts runs of up to most consumes of log (whose first entry is at
// index 1) into batches, each at the index of its first command; other
// entries keep theirs (acquires and checksums are known by their index).
func regroup(t *testing.T, log [][]byte, most int) []entry {
	t.Helper()
	var out []entry
	var run []*Command
	var at uint64
	flush := func() {
		if len(run) > 0 {
			out = append(out, entry{at, (&Command{Op: OpBatch, Now: run[0].Now, Batch: run}).Encode()})
		}
		run = nil
	}
	for i, data := range log {
		c, err := DecodeCommand(data)
		if err != nil {
			t.Fatal(err)
		}
		if !batchable(c.Op) {
			flush()
			out = append(out, entry{uint64(i + 1), data})
			continue
		}
		if len(run) == 0 {
			at = uint64(i + 1)
		}
		if run = append(run, c); len(run) == most {
			flush()
		}
	}
	flush()
	return out
}

// TestConsumesArrivingTogetherShareOneEntry holds the first consume's
// sender at the leader's clock until more consumes have arrived: they must
// go into the log as one entry, after the first, and each be charged once
// with its own sequence number.
func TestConsumesArrivingTogetherShareOneEntry(t *testing.T) {
	gate := make(chan struct{})
	var armed atomic.Bool
	wall := func() time.Time {
		if armed.CompareAndSwap(true, false) {
			<-gate
		}
		return time.Now()
	}
	tc := newCluster(t, 3, func(c *Config) { c.Wall = wall })
	l := tc.leader()
	s, nd := tenant(t, l)
	consume := func() (uint64, uint64, error) {
		c := &engine.Call{Session: s.ID}
		_, index, err := l.apply(c, &Command{Op: OpConsume, Target: nd.ID, Name: "tokens", Amount: 1})
		return index, c.Seq, err
	}
	const together = 6
	armed.Store(true)
	firstIndex := make(chan uint64, 1)
	go func() {
		index, _, err := consume()
		if err != nil {
			t.Error(err)
		}
		firstIndex <- index
	}()
	waitUntil(t, "the first consume's sender reads the clock", func() bool { return !armed.Load() })
	indexes, seqs := make([]uint64, together), make([]uint64, together)
	var wg sync.WaitGroup
	for i := range together {
		wg.Go(func() {
			var err error
			if indexes[i], seqs[i], err = consume(); err != nil {
				t.Error(err)
			}
		})
	}
	waitUntil(t, "the callers join the next batch", func() bool { return waiting(l) == together })
	close(gate)
	wg.Wait()
	first := <-firstIndex
	seen := make(map[uint64]bool)
	for i := range together {
		if indexes[i] != indexes[0] || indexes[i] <= first {
			t.Fatalf("the consumes that arrived together went to log indexes %v, the first to %d; want one index after it", indexes, first)
		}
		if seen[seqs[i]] || seqs[i] == 0 {
			t.Fatalf("sequence numbers %v: want one of its own for each consume", seqs)
		}
		seen[seqs[i]] = true
	}
	if got := used(t, l, nd.ID); got != together+1 {
		t.Fatalf("%d tokens used after %d consumes", got, together+1)
	}
	if !tc.converged() {
		t.Fatal("members differ after a batch")
	}
}

// waiting is how many consumes wait in the batch gathering on n.
func waiting(n *Node) int {
	n.batches.mu.Lock()
	defer n.batches.mu.Unlock()
	if n.batches.next == nil {
		return 0
	}
	return len(n.batches.next.cmds)
}

// waitUntil polls cond until it holds, for goroutines to reach a state;
// it fails t after 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for this in vain: %s", what)
		}
		time.Sleep(time.Millisecond) // waiting for goroutines to get there, not for a result
	}
}

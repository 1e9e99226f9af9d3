package engine

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"
)

// BenchmarkIdleNodeMemory reports the live heap one idle node costs, in a
// tree shaped like a daemon's after a while of work (see buildIdleWorld),
// at 10,000 and 1,000,000 nodes. "engine" is the engine alone; "image" adds
// the snapshot image the durable store keeps beside it, a record per node.
// Both are measured after a capture, as a daemon holds them between
// snapshots: the engine's change lists are empty.
func BenchmarkIdleNodeMemory(b *testing.B) {
	for _, tenants := range []int{10, 1000} {
		b.Run(fmt.Sprintf("tenants=%d/engine", tenants), func(b *testing.B) {
			for b.Loop() {
				measureIdle(b, func() (any, int) {
					e := buildIdleWorld(b, tenants)
					e.Capture()
					return e, e.nodeCount()
				})
			}
		})
		b.Run(fmt.Sprintf("tenants=%d/image", tenants), func(b *testing.B) {
			for b.Loop() {
				measureIdle(b, func() (any, int) {
					e := buildIdleWorld(b, tenants)
					im := NewImage(nil)
					im.Apply(e.Capture())
					return []any{e, im}, e.nodeCount()
				})
			}
		})
	}
}

// idleProfile names a file to write a heap profile to while the world of a
// BenchmarkIdleNodeMemory run is alive (with -memprofilerate=1 for an exact
// one); the last run's profile is kept.
var idleProfile = flag.String("idleprofile", "", "write a heap profile of BenchmarkIdleNodeMemory's world to this file")

// measureIdle reports the live heap that what build returns holds, per node
// of the count it returns.
func measureIdle(b *testing.B, build func() (any, int)) {
	before := liveHeap()
	kept, nodes := build()
	after := liveHeap()
	if *idleProfile != "" {
		writeHeapProfile(b, *idleProfile)
	}
	runtime.KeepAlive(kept)
	b.ReportMetric(float64(after-before)/float64(nodes), "B/node")
	b.ReportMetric(float64(nodes), "nodes")
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	must(b, err)
	defer f.Close()
	must(b, pprof.Lookup("heap").WriteTo(f, 0))
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func (e *Engine) nodeCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.nodes)
}

// buildIdleWorld builds a tree of about 1,000 nodes per tenant, as agents
// and rate-limited keys leave it, through the engine's API. Each tenant
// caps tokens and an llm class and gives its tasks a tokens cap and their
// children one; one session creates 80 tasks of 10 children each, every
// child charged tokens once; a third of the tasks are closed and retained
// with their children; and a keyed group holds 119 keys with a rate cap,
// each consumed once.
func buildIdleWorld(b *testing.B, tenants int) *Engine {
	clock := newFakeClock()
	e := New(Options{Clock: clock})
	sys := &Call{}
	big := int64(math.MaxInt64 / 4)
	for t := range tenants {
		ten, err := e.Create(sys, RootID, Spec{
			Name: "tenant" + strconv.Itoa(t), Quotas: map[string]int64{"tokens": big}, Limits: map[string]int64{"llm": 8},
		})
		must(b, err)
		must(b, e.SetDefaults(sys, ten.ID, Defaults{
			Caps:     Caps{Quotas: map[string]int64{"tokens": 1 << 40}},
			Children: &Caps{Quotas: map[string]int64{"tokens": 1 << 30}},
		}))
		s, err := e.OpenSession(sys, ten.ID, 0, token(t))
		must(b, err)
		c := &Call{Session: s.ID}
		for k := range 80 {
			task, err := e.Create(c, 0, Spec{Name: "task" + strconv.Itoa(k)})
			must(b, err)
			for j := range 10 {
				_, _, err := e.Ensure(c, task.ID, Spec{Name: "step" + strconv.Itoa(j)}, &Charge{Resource: "tokens", Amount: 100})
				must(b, err)
			}
			if k%3 == 0 {
				must(b, e.Close(c, task.ID))
			}
		}
		for k := range 119 {
			kl := KeyedLimit{Group: "api", Key: "user" + strconv.Itoa(k), Resource: "requests", Rate: Rate{Limit: 100, Period: time.Second}}
			_, err := e.ConsumeKeyed(c, kl, 1, ConsumeOptions{})
			must(b, err)
		}
		clock.Advance(time.Millisecond)
	}
	return e
}

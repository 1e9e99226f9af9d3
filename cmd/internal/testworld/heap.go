package testworld

import (
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

// heapProfile names a file to write a heap profile to while what
// MeasureHeap's build returned is alive (with -memprofilerate=1 for an
// exact one); each run overwrites it.
var heapProfile = flag.String("heapprofile", "", "write a heap profile of what a MeasureHeap benchmark holds to this file")

// MeasureHeap runs build and reports the live heap that what it returns
// holds, per node of the count it returns, as "B/node". Garbage is collected
// before and after, so only what build keeps reachable counts.
func MeasureHeap(b *testing.B, build func() (kept any, nodes int)) {
	b.Helper()
	before := liveHeap()
	kept, nodes := build()
	after := liveHeap()
	if *heapProfile != "" {
		writeHeapProfile(b, *heapProfile)
	}
	runtime.KeepAlive(kept)
	b.ReportMetric(float64(after-before)/float64(nodes), "B/node")
	b.ReportMetric(float64(nodes), "nodes")
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	check(b, err)
	defer f.Close()
	check(b, pprof.Lookup("heap").WriteTo(f, 0))
}

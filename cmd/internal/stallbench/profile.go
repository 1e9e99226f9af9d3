package stallbench

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// The flags that profile the busy windows alone, so that what the quiet
// tenant feels is not drowned in what building the wide node costs. Merge
// the CPU profiles with `go tool pprof PREFIX.*`; read the trace with
// `go tool trace -pprof=sync|sched|net|syscall FILE` for where the probes
// waited.
var (
	cpuPrefix = flag.String("stallbench.cpuprofile", "", "write a CPU profile of each busy window to `prefix`.N")
	traceFile = flag.String("stallbench.trace", "", "write an execution trace of the first busy window to `file`")
)

// Begin marks the start of a busy window, to be closed by Busy, and starts
// what the flags ask to record of it. A failure to record fails the
// benchmark's process, since the profile asked for would be missing.
func (w *Windows) Begin() time.Time {
	busy := 0
	for _, x := range w.list {
		if x.busy {
			busy++
		}
	}
	if *cpuPrefix != "" {
		w.cpu = create(fmt.Sprintf("%s.%d", *cpuPrefix, busy))
		check(pprof.StartCPUProfile(w.cpu))
	}
	if *traceFile != "" && busy == 0 {
		w.trace = create(*traceFile)
		check(trace.Start(w.trace))
	}
	w.gcAt = gcCycles()
	return time.Now()
}

// stopProfiles ends what Begin started.
func (w *Windows) stopProfiles() {
	if w.cpu != nil {
		pprof.StopCPUProfile()
		check(w.cpu.Close())
		w.cpu = nil
	}
	if w.trace != nil {
		trace.Stop()
		check(w.trace.Close())
		w.trace = nil
	}
}

func create(name string) *os.File {
	f, err := os.Create(name)
	check(err)
	return f
}

func check(err error) {
	if err != nil {
		panic(fmt.Sprintf("stallbench: record a busy window: %v", err))
	}
}

package engine

import (
	"fmt"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/testclock"
)

// BenchmarkReapIdleKeys measures one reaper pass over a rotating key space,
// the engine lock held throughout: keys arrive at 400 a second, each hit
// once, and are forgotten once idle for a minute, so about 24,000 are held
// under one group name and each pass, a second after the last, forgets the
// 400 that went idle. A pass must cost what it forgets, not what is held.
// cpu-µs/pass is the process's CPU time in the passes, steadier than the
// wall time on a busy machine.
func BenchmarkReapIdleKeys(b *testing.B) {
	const perSecond, idle = 400, 60 * time.Second
	clock := newFakeClock()
	e := New(Options{Clock: clock})
	set := DefaultSettings()
	set.KeyIdle = idle
	must(b, e.Configure(&Call{}, set))
	tenant, err := e.Create(&Call{}, RootID, Spec{Name: "acme"})
	must(b, err)
	next := 0
	second := func() {
		for range perSecond {
			k := KeyedLimit{Parent: tenant.ID, Group: "requests_per_sec", Key: fmt.Sprint("account:", next),
				Resource: "api", Rate: Rate{Limit: 10, Period: time.Second}}
			_, err := e.ConsumeKeyed(&Call{}, k, 1, ConsumeOptions{})
			must(b, err)
			next++
		}
		clock.Advance(time.Second)
	}
	for range int(idle / time.Second) {
		second()
		e.Reap(&Call{})
	}
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		second()
		b.StartTimer()
		start := testclock.ProcessCPU()
		if e.Reap(&Call{}) == 0 {
			b.Fatal("the pass forgot no key")
		}
		cpu += testclock.ProcessCPU() - start
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/pass")
	e.mu.Lock()
	held := e.nodes[tenant.ID].byName["requests_per_sec"].order.len()
	e.mu.Unlock()
	b.ReportMetric(float64(held), "keys_held")
}

package engine

import (
	"strconv"
	"testing"
)

// BenchmarkConsumeRemembered is a consume with a new request id each time
// on one busy session: at the fake clock's standstill every id is within
// the window, so the memory grows to RequestMemoryMax and then forgets one
// id for each it remembers. -benchmem tells what remembering costs.
func BenchmarkConsumeRemembered(b *testing.B) {
	f := newFixture(b)
	ten := f.tenant(Spec{Name: "t"})
	s := f.session(ten, 0)
	reqs := make([]string, 1<<17)
	for i := range reqs {
		reqs[i] = "r" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		must(b, f.e.Consume(&Call{Session: s, Request: reqs[i%len(reqs)]}, 0, "mem", 1))
		i++
		if i%len(reqs) == 0 {
			f.clock.Advance(RequestWindow + 1) // the ids of the last round are past the window
		}
	}
}

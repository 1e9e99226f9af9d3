package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// memWorld is a tenant with two sessions that consume "mem" on the tenant
// node, each call with a request id.
type memWorld struct {
	f    *fixture
	ten  ID
	a, b ID
}

func newMemWorld(t *testing.T) *memWorld {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	return &memWorld{f: f, ten: ten, a: f.session(ten, 0), b: f.session(ten, 0)}
}

func (w *memWorld) consume(s ID, req string) {
	w.f.t.Helper()
	must(w.f.t, w.f.e.Consume(&Call{Session: s, Request: req}, 0, "mem", 1))
}

// charged repeats req on session s and reports whether it was charged
// again (forgotten) or answered from memory.
func (w *memWorld) charged(s ID, req string) bool {
	w.f.t.Helper()
	before := w.f.used(w.ten, "mem")
	w.consume(s, req)
	return w.f.used(w.ten, "mem") != before
}

// remembered is how many ids session s remembers, from its record.
func (w *memWorld) remembered(s ID) int {
	for _, r := range w.f.e.Dump().Sessions {
		if r.ID == s {
			return len(r.Mem)
		}
	}
	w.f.t.Fatalf("session %d is not in the dump", s)
	return 0
}

// TestRequestMemoryKeepsTheWindow checks the rule of SPEC §9: a session
// remembers every id of the last RequestWindow however many, and at least
// its most recent RequestMemory once they are older.
func TestRequestMemoryKeepsTheWindow(t *testing.T) {
	w := newMemWorld(t)
	const calls = 5_000
	for i := range calls {
		w.consume(w.a, fmt.Sprint("r", i))
	}
	for _, i := range []int{0, 1, calls - RequestMemory, calls - 1} {
		if w.charged(w.a, fmt.Sprint("r", i)) {
			t.Fatalf("r%d, within the window, was charged again", i)
		}
	}
	w.f.clock.Advance(RequestWindow + time.Nanosecond)
	w.consume(w.a, "later")
	if n := w.remembered(w.a); n != RequestMemory {
		t.Fatalf("past the window the session remembers %d ids, want its most recent %d", n, RequestMemory)
	}
	oldest := calls - RequestMemory + 1 // "later" is one of the most recent
	if w.charged(w.a, fmt.Sprint("r", oldest)) {
		t.Fatalf("r%d, among the most recent %d, was charged again", oldest, RequestMemory)
	}
	if !w.charged(w.a, fmt.Sprint("r", oldest-1)) {
		t.Fatalf("r%d, past the window and not among the most recent %d, was answered from memory", oldest-1, RequestMemory)
	}
}

// TestRequestMemoryHasACeiling checks that a session remembers at most
// RequestMemoryMax ids, however quickly it calls.
func TestRequestMemoryHasACeiling(t *testing.T) {
	w := newMemWorld(t)
	for i := range RequestMemoryMax + 1 {
		w.consume(w.a, fmt.Sprint("r", i))
	}
	if n := w.remembered(w.a); n != RequestMemoryMax {
		t.Fatalf("the session remembers %d ids, want %d", n, RequestMemoryMax)
	}
	if w.charged(w.a, "r1") {
		t.Fatal("r1, the oldest of the most recent RequestMemoryMax, was charged again")
	}
	if !w.charged(w.a, "r0") {
		t.Fatal("r0, past the ceiling, was answered from memory")
	}
}

// TestQuietSessionForgetsWithTheWindow checks that a session that stopped
// calling forgets its ids past the window when any other session's call is
// remembered, and that an ended session leaves nothing behind.
func TestQuietSessionForgetsWithTheWindow(t *testing.T) {
	w := newMemWorld(t)
	for i := range 2_000 {
		w.consume(w.a, fmt.Sprint("r", i))
	}
	c := w.f.session(w.ten, 0)
	for i := range 1_500 {
		w.consume(c, fmt.Sprint("c", i))
	}
	must(t, w.f.e.CloseSession(&Call{Session: c}))
	if len(w.f.e.memOld) != 1 {
		t.Fatalf("%d sessions wait to forget, want 1: the closed one must be gone", len(w.f.e.memOld))
	}
	w.f.clock.Advance(RequestWindow + time.Nanosecond)
	if n := w.remembered(w.a); n != 2_000 {
		t.Fatalf("before any later call the session remembers %d ids, want 2000", n)
	}
	w.consume(w.b, "b0")
	if n := w.remembered(w.a); n != RequestMemory {
		t.Fatalf("after another session's call the quiet session remembers %d ids, want %d", n, RequestMemory)
	}
	if len(w.f.e.memOld) != 0 {
		t.Fatalf("%d sessions still wait to forget", len(w.f.e.memOld))
	}
}

// TestRequestMemoryAcrossRestarts checks that a snapshot and a replay keep
// the ids with their times, so that a restarted engine forgets exactly
// what the live one forgets.
func TestRequestMemoryAcrossRestarts(t *testing.T) {
	w := newMemWorld(t)
	for i := range 3_000 {
		w.consume(w.a, fmt.Sprint("r", i))
		w.f.clock.Advance(30 * time.Millisecond) // 3,000 calls span 90 s: the window cuts them
	}
	w.consume(w.b, "b0")
	raw, err := w.f.e.Dump().Encode()
	must(t, err)
	st, err := DecodeSnapshot(raw)
	must(t, err)
	decoded, err := Restore(Options{Clock: w.f.clock, Sink: &recorder{}}, st)
	must(t, err)
	engines := loadedCut(t, w.f.clock, w.f.rec.events)
	engines["decoded"] = decoded
	engines["live"] = w.f.e
	w.f.clock.Advance(20 * time.Second)
	for _, e := range engines {
		must(t, e.Consume(&Call{Session: w.b, Request: "b1"}, 0, "mem", 1))
		for _, req := range []string{"r1200", "r2999"} {
			must(t, e.Consume(&Call{Session: w.a, Request: req}, 0, "mem", 1))
		}
	}
	want := w.f.e.Dump()
	for name, e := range engines {
		sameSessions(t, name, e.Dump(), want)
	}
	// r1200 was called 36 s into the run, 74 s before "b1": forgotten;
	// r2999 was remembered.
	if got, want := w.f.used(w.ten, "mem"), int64(3_000+2+1); got != want {
		t.Fatalf("used %d, want %d: r1200 charged again and r2999 not", got, want)
	}
}

// sameSessions fails unless two dumps hold the same sessions with the same
// memories.
func sameSessions(t *testing.T, name string, got, want *Snapshot) {
	t.Helper()
	if len(got.Sessions) != len(want.Sessions) {
		t.Fatalf("%s: %d sessions, want %d", name, len(got.Sessions), len(want.Sessions))
	}
	for i := range got.Sessions {
		g, w := got.Sessions[i].Mem, want.Sessions[i].Mem
		if len(g) != len(w) {
			t.Fatalf("%s: session %d remembers %d ids, the live engine %d", name, got.Sessions[i].ID, len(g), len(w))
		}
		for j := range g {
			if g[j].Request != w[j].Request || g[j].At != w[j].At {
				t.Fatalf("%s: session %d's id %d is %q at %d, the live engine's %q at %d", name, got.Sessions[i].ID, j, g[j].Request, g[j].At, w[j].Request, w[j].At)
			}
		}
	}
}

// TestRequestMemoryUpdatesInPlace checks that the index points into the
// chunks themselves: a call remembered again (a call that records several
// events) replaces its entry where it stands, keeping its first time, as
// the memory's record shows, however many entries came after it.
func TestRequestMemoryUpdatesInPlace(t *testing.T) {
	var m reqMemory
	for i := range 3 * memChunkMax {
		m.add(memEntry{req: fmt.Sprint("r", i), result: ID(i), at: int64(i)})
	}
	m.add(memEntry{req: "r5", result: 1000, at: 9999})
	got, ok := m.get("r5")
	if !ok || got.result != 1000 || got.at != 5 {
		t.Fatalf("r5 is remembered as %+v (found %v), want result 1000 at its first time 5", got, ok)
	}
	if e := m.entries()[5]; e.req != "r5" || e.result != 1000 {
		t.Fatalf("the memory's sixth entry is %+v, want r5 with result 1000", e)
	}
	if m.n != 3*memChunkMax {
		t.Fatalf("the memory holds %d entries, want %d", m.n, 3*memChunkMax)
	}
}

// TestRestoreRefusesABadRequestMemory damages one session's remembered ids
// in a snapshot at a time: more than RequestMemoryMax of them, one id
// twice, or times out of order. Each damaged snapshot is refused as
// corrupt; the undamaged one restores.
func TestRestoreRefusesABadRequestMemory(t *testing.T) {
	w := newMemWorld(t)
	for i := range 3 {
		w.consume(w.a, fmt.Sprint("r", i))
		w.f.clock.Advance(time.Second)
	}
	mem := func(st *Snapshot) *[]MemRec {
		for i := range st.Sessions {
			if st.Sessions[i].ID == w.a {
				return &st.Sessions[i].Mem
			}
		}
		t.Fatalf("session %d is not in the snapshot", w.a)
		return nil
	}
	for _, tc := range []struct {
		name   string
		damage func(m *[]MemRec)
		want   string
	}{
		{"none", func(*[]MemRec) {}, ""},
		{"too many", func(m *[]MemRec) {
			for i := len(*m); i <= RequestMemoryMax; i++ {
				*m = append(*m, MemRec{Request: fmt.Sprint("x", i), At: (*m)[len(*m)-1].At})
			}
		}, "more than the 65536 a session keeps"},
		{"an id twice", func(m *[]MemRec) { (*m)[2].Request = (*m)[0].Request }, "twice or out of time order"},
		{"out of time order", func(m *[]MemRec) { (*m)[2].At = (*m)[1].At - 1 }, "twice or out of time order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := w.f.e.Dump()
			tc.damage(mem(st))
			_, err := Restore(Options{Clock: w.f.clock}, st)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("the undamaged snapshot was refused: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("restore gave %v, want a corrupt record saying %q", err, tc.want)
			}
		})
	}
}

package eventlog

import "testing"

// TestMemoryCommitsWithoutATimer: an in-memory commit, which cannot hang,
// is given no CommitTimeout and so no timer; the same Memory behind a
// wrapper that hides it, as a backend that may hang, gets the timeout's
// context and timer on every commit.
func TestMemoryCommitsWithoutATimer(t *testing.T) {
	perCall := func(b Backend) float64 {
		w := startWriter(t, b, 0, WriterOptions{})
		e := newEngine(w, 0)
		ctx := ctxT(t)
		return testing.AllocsPerRun(500, func() {
			if _, err := e.do(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	bare, hidden := perCall(NewMemory()), perCall(struct{ Backend }{NewMemory()})
	if bare+2 > hidden {
		t.Fatalf("a call on Memory allocated %v times, behind a wrapper %v: want at least the timeout's context and timer (2) fewer on Memory", bare, hidden)
	}
}

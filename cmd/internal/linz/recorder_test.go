package linz

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func TestRecorderOrdersCallsAndEndsUnknownsLast(t *testing.T) {
	r := NewRecorder()
	first := r.Call(0, consume("k", 1))
	first.Return(ok)
	lost := r.Call(1, consume("k", 2))
	lost.Unknown()
	open := r.Call(2, read("k"))
	later := r.Call(0, read("k"))
	later.Return(usage(1))
	r.Call(1, consume("k", 3)).Forget()

	h := r.History()
	if len(h) != 4 {
		t.Fatalf("history has %d calls, want 4", len(h))
	}
	if !(h[0].Call < h[0].Return && h[0].Return < h[1].Call && h[1].Call < h[2].Call && h[2].Call < h[3].Call) {
		t.Fatalf("calls out of order: %+v", h)
	}
	for _, i := range []int{1, 2} {
		if !isUnknown(h[i].Output) || h[i].Return <= h[3].Return {
			t.Fatalf("call %d: output %v returning at %d, want Unknown after every other event (%d)", i, h[i].Output, h[i].Return, h[3].Return)
		}
	}
	if h[3].Output != usage(1) || h[3].ClientId != 0 {
		t.Fatalf("last call %+v, want client 0 returning usage 1", h[3])
	}
	open.Return(usage(3))
	if again := r.History(); again[2].Output != usage(3) {
		t.Fatalf("a call returned after History was read shows %v", again[2].Output)
	}
}

func TestRecorderIsSafeForConcurrentClients(t *testing.T) {
	r := NewRecorder()
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for range 100 {
				r.Call(c, read("k")).Return(usage(0))
			}
		})
	}
	wg.Wait()
	h := r.History()
	if len(h) != 800 {
		t.Fatalf("history has %d calls, want 800", len(h))
	}
	Check(t, Quota(1), h, 10*time.Second)
}

// failingTB records failures instead of failing the test that holds it.
type failingTB struct {
	testing.TB
	errors []string
}

func (f *failingTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, format)
	f.TB.Logf(format, args...)
}

func TestCheckWritesVisualisationOfIllegalHistory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(VisualizeDirEnv, dir)
	stale := []porcupine.Operation{
		call(0, 0, 10, consume("k", 5), ok),
		call(1, 20, 30, read("k"), usage(0)),
	}
	tb := &failingTB{TB: t}
	if Check(tb, Quota(10), stale, time.Second) || len(tb.errors) != 1 {
		t.Fatalf("Check passed a stale read (errors %q)", tb.errors)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(files) != 1 {
		t.Fatalf("visualisations %v (%v), want one", files, err)
	}
	page, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "read(k) → 0") {
		t.Fatal("the visualisation does not describe the stale read")
	}

	tb = &failingTB{TB: t}
	if !Check(tb, Quota(10), stale[:1], time.Second) || len(tb.errors) != 0 {
		t.Fatalf("Check failed a legal history: %q", tb.errors)
	}
}

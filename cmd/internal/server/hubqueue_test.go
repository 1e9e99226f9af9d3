package server

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/pace"
	"governor.dev/governor/cmd/internal/testclock"
)

// queuedHub is a hub over a tenant's engine, fed through a hubQueue, and
// the engine's events since the hub's dump.
func queuedHub(t *testing.T) (*hub, *hubQueue, *engine.Engine, *keptEvents) {
	t.Helper()
	kept := &keptEvents{}
	e := engine.New(engine.Options{Clock: testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Sink: kept})
	if _, err := e.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	h := newHub(e.Dump(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	kept.evs = nil
	return h, newHubQueue(h, e), e, kept
}

// returns reports whether f returns within a generous bound.
func returns(f func()) bool {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// caughtUp waits until the hub has applied event seq, or fails t.
func caughtUp(t *testing.T, h *hub, seq uint64) {
	t.Helper()
	eventually(t, fmt.Sprint("the hub to reach event ", seq), func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.seq >= seq
	})
}

// TestPublishLeavesTheHubsWorkToItsOwnGoroutine publishes while the hub
// is busy, as it is mirroring a wide tenant's steps: Publish, which the
// writer goroutine calls between two commits, returns at once, keeps none
// of the events it was handed, and the hub applies copies of them in order
// once it is free.
func TestPublishLeavesTheHubsWorkToItsOwnGoroutine(t *testing.T) {
	h, q, e, kept := queuedHub(t)
	var ids []engine.ID
	for i := range 3 {
		n, err := e.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: fmt.Sprint("n", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, n.ID)
	}
	last := kept.evs[len(kept.evs)-1].Seq
	h.mu.Lock()
	ok := returns(func() { q.publish(kept.evs[:1]); q.publish(kept.evs[1:]) })
	for _, ev := range kept.evs {
		*ev = engine.Event{} // the engine reuses an event once Publish returned
	}
	h.mu.Unlock()
	if !ok {
		t.Fatal("Publish waited for the hub to apply the events")
	}
	caughtUp(t, h, last)
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, id := range ids {
		if n := h.nodes[id]; n == nil || n.name != fmt.Sprint("n", i) {
			t.Errorf("the hub mirrors node %d as %+v, want it named n%d", id, n, i)
		}
	}
}

// TestPublishWaitsWhenTheHubIsFarBehind holds the hub while the writer
// publishes: once feedBehind events wait besides those the drain took,
// Publish waits for the hub, so that memory stays bounded, and returns
// once the hub is free.
func TestPublishWaitsWhenTheHubIsFarBehind(t *testing.T) {
	h, q, e, _ := queuedHub(t)
	seq := e.Seq()
	batch := func() []*engine.Event {
		evs := make([]*engine.Event, feedBehind)
		for i := range evs {
			seq++
			evs[i] = &engine.Event{Seq: seq, Kind: engine.KindSessionOpened, Target: engine.ID(seq)}
		}
		return evs
	}
	h.mu.Lock()
	q.publish(batch()) // the drain takes it and waits for the hub
	q.publish(batch()) // queued
	third := batch()
	done := make(chan struct{})
	go func() { q.publish(third); close(done) }()
	select {
	case <-done:
		h.mu.Unlock()
		t.Fatalf("Publish returned with %d events waiting for the hub", 2*feedBehind)
	case <-time.After(50 * time.Millisecond):
	}
	h.mu.Unlock()
	<-done
	caughtUp(t, h, seq)
}

// TestDrainLetsOthersRunBetweenPieces queues 4,000 events at once, as a
// wide tenant's cancel does, on one processor, while another goroutine
// reads how far the hub has got, yielding after each read. The drain
// yields after every drainPiece events, so the reader sees the hub between
// most pieces; applied in one go, it saw none (a fraction of the 10 ms
// after which Go preempts). The drain's clock stands still, so it never
// rests: what lets the reader in is the yield alone.
func TestDrainLetsOthersRunBetweenPieces(t *testing.T) {
	h, q, e, _ := queuedHub(t)
	still := time.Now()
	q.wall = pace.Clock{
		Now:   func() time.Time { return still },
		Sleep: func(time.Duration) { t.Error("the drain rested on a clock that stands still") },
	}
	const n = 4000
	from := e.Seq()
	evs := make([]*engine.Event, n)
	for i := range evs {
		evs[i] = &engine.Event{Seq: from + uint64(i) + 1, Kind: engine.KindSessionOpened, Target: engine.ID(i + 1)}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	seen := map[uint64]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			h.mu.Lock()
			at := h.seq
			h.mu.Unlock()
			if at == from+n {
				return
			}
			seen[at] = true
			runtime.Gosched()
		}
	}()
	runtime.Gosched() // the reader reads the hub before anything is queued
	q.publish(evs)
	<-done
	between := 0
	for at := range seen {
		if at > from && (at-from)%drainPiece == 0 {
			between++
		}
	}
	if pieces := n / drainPiece; between < pieces/2 {
		t.Fatalf("the reader saw the hub between %d of the drain's %d pieces, want at least half", between, pieces)
	}
}

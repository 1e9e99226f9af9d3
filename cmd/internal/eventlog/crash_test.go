package eventlog

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The crash child's switch: the URL of the store it writes to.
const crashURLEnv = "GOVERNOR_EVENTLOG_CRASH_URL"

// TestCrash kills a writing process with SIGKILL at random moments and
// checks after each kill that every event it acknowledged is on record and
// that the record has no hole. GOVERNOR_LONG=1 kills 20 times a backend
// instead of 3.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	kills := 3
	if os.Getenv("GOVERNOR_LONG") == "1" {
		kills = 20
	}
	for _, bc := range backendCases {
		if !bc.durable {
			continue
		}
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			url := bc.newURL(t)
			var acked uint64
			for i := range kills {
				acked = max(acked, crashOnce(t, url, i))
			}
			t.Logf("%d kills, %d events acknowledged at most", kills, acked)
		})
	}
}

// crashOnce runs the child on url, kills it at a random moment, and checks
// the record. It returns the highest event the child acknowledged.
func crashOnce(t *testing.T, url string, round int) uint64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashURLEnv+"="+url)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	acks := make(chan uint64, 1<<16)
	var read sync.WaitGroup
	read.Go(func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if seq, err := strconv.ParseUint(lines.Text(), 10, 64); err == nil {
				acks <- seq
			}
		}
		close(acks)
	})
	var acked []uint64
	first, ok := <-acks
	if !ok {
		cmd.Wait()
		t.Fatalf("round %d: the child acknowledged nothing", round)
	}
	acked = append(acked, first)
	time.Sleep(time.Duration(rand.IntN(400)) * time.Millisecond)
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	for seq := range acks {
		acked = append(acked, seq)
	}
	read.Wait()
	cmd.Wait()

	b := openURL(t, url)
	l := load(t, b)
	must(t, b.Close())
	if l.snap != nil {
		checkLoad(t, l, l.snap.Seq, l.last())
	} else {
		checkLoad(t, l, 0, l.last())
	}
	var top uint64
	for _, seq := range acked {
		top = max(top, seq)
	}
	if top > l.last() {
		t.Fatalf("round %d: event %d was acknowledged but the record ends at %d", round, top, l.last())
	}
	t.Logf("round %d: %d acknowledged (up to %d), record ends at %d, snapshot at %v", round, len(acked), top, l.last(), l.snap != nil)
	return top
}

// TestCrashChild is the process TestCrash kills: 16 producers apply events
// through a Writer and print each sequence number once Wait returned nil,
// while snapshots are saved as the engine would save them.
func TestCrashChild(t *testing.T) {
	url := os.Getenv(crashURLEnv)
	if url == "" {
		t.Skip("run by TestCrash")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // outlives no parent
	defer cancel()
	b, err := Open(ctx, url, quiet)
	must(t, err)
	var l loaded
	must(t, b.Load(ctx, func(s *Snapshot) error { l.snap = s; return nil }, func(r Record) error {
		l.recs = append(l.recs[:0], r)
		return nil
	}))
	w := NewWriter(b, l.last(), WriterOptions{Logger: quiet})
	w.Start()
	e := newEngine(w, l.last())
	go snapshotLoop(ctx, e, b)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for ctx.Err() == nil {
				seq, err := e.do(ctx)
				if err != nil {
					return
				}
				fmt.Fprintln(os.Stdout, seq) // one write: after a kill it is whole or absent
			}
		})
	}
	wg.Wait()
}

// snapshotLoop saves a snapshot every few milliseconds the way the engine
// does: capture the sequence number under the lock, wait until it is on
// record, save outside the lock.
func snapshotLoop(ctx context.Context, e *engine, b Backend) {
	for ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		e.mu.Lock()
		seq := e.n
		e.mu.Unlock()
		if e.w.Wait(ctx, seq) != nil || b.SaveSnapshot(ctx, snapshotAt(seq)) != nil {
			return
		}
	}
}

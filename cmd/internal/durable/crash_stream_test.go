package durable

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"governor.dev/governor/cmd/internal/engine"
)

// crashWideEnv makes the crash worker grow a tree of wideNodes nodes with
// names that do not compress, and snapshot every 300 events, so that it
// spends most of its time streaming snapshots of many chunks.
const (
	crashWideEnv = "GOVERNOR_CRASH_WIDE"
	wideNodes    = 40_000
)

// wideTree finds or creates the wide tree; it is the same at every start.
func wideTree(ctx context.Context, s *Store) error {
	c := &engine.Call{}
	top, _, err := s.Engine.Ensure(c, engine.RootID, engine.Spec{Name: "wide"}, nil)
	if err != nil {
		return err
	}
	for i := range wideNodes {
		name := fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint(i))))
		if _, _, err := s.Engine.Ensure(c, top.ID, engine.Spec{Name: name}, nil); err != nil {
			return err
		}
	}
	return s.Wait(ctx, c.Seq)
}

// TestCrashDuringStreamedSnapshot kills a worker that streams snapshots of
// a wide tree nearly all the time, until two kills have left the chunks of
// an unfinished snapshot on record (within 30 kills: on a loaded machine a
// kill often lands between snapshots); after every kill the record loads
// with everything acknowledged, and the next snapshot clears those chunks.
func TestCrashDuringStreamedSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes")
	}
	forEachBackend(t, func(t *testing.T, url string) {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
		caught, round, answered := 0, 0, 0
		for ; caught < 2; round++ {
			if round == 30 {
				t.Fatalf("in %d kills, %d left an unfinished snapshot's chunks: the test did not kill a streaming snapshot twice", round, caught)
			}
			// Each round's answers are checked once, right after its kill:
			// the worker's sessions live 2 s, and the next worker spends
			// longer than that growing its tree.
			acks := runAndKill(t, url, time.Duration(200+rng.IntN(800))*time.Millisecond, crashWideEnv+"=1")
			answered += len(acks)
			if unfinishedChunks(t, url) > 0 {
				caught++
			}
			verifyRecord(t, url, acks, round)
			s := open(t, url, wallClock{}, math.MaxInt64)
			must(t, s.SnapshotNow(context.Background()))
			must(t, s.Close(context.Background()))
			if n := unfinishedChunks(t, url); n > 0 {
				t.Fatalf("round %d: a finished snapshot left %d chunks of an unfinished one", round, n)
			}
		}
		t.Logf("%d kills, %d during a streamed snapshot, %d answers acknowledged", round, caught, answered)
	})
}

// unfinishedChunks counts the stored snapshot chunks that no snapshot names,
// reading the record's database directly.
func unfinishedChunks(t *testing.T, url string) int {
	t.Helper()
	const q = "SELECT COUNT(*) FROM snapshot_chunks WHERE id NOT IN (SELECT chunk_id FROM snapshots)"
	ctx := context.Background()
	var n int
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok {
		db, err := sql.Open("sqlite", "file:"+filepath.Clean(path))
		must(t, err)
		defer db.Close()
		must(t, db.QueryRowContext(ctx, q).Scan(&n))
		return n
	}
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	must(t, conn.QueryRow(ctx, q).Scan(&n))
	return n
}

package sdktest

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"governor.dev/governor"
)

func TestDBTxChargesAndHoldsPerTransaction(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	sqlDB, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "app.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	if _, err := sqlDB.Exec(`CREATE TABLE pages (url TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	ctx, tk := task(t, c, governor.Spec{Name: "store", Quotas: map[string]int64{"sql": 8}, Limits: map[string]int64{"db": 2}})
	db := governor.NewDB(sqlDB)

	var inTx, most atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			errs <- db.Tx(ctx, func(tx *sql.Tx) error {
				n := inTx.Add(1)
				defer inTx.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(10 * time.Millisecond)
				_, err := tx.ExecContext(ctx, `INSERT INTO pages (url) VALUES (?)`, "https://example.com/"+string(rune('a'+i)))
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := most.Load(); m > 2 {
		t.Fatalf("%d transactions at once under a db limit of 2", m)
	}
	var rows int
	if err := sqlDB.QueryRow(`SELECT count(*) FROM pages`).Scan(&rows); err != nil || rows != 8 {
		t.Fatalf("%d rows committed (%v), want 8", rows, err)
	}
	if u := used(t, g.addr, tk.ID(), "sql"); u != 8 {
		t.Fatalf("%d sql units used for 8 transactions", u)
	}

	// fn's error rolls back; the spent quota refuses the next transaction.
	boom := errors.New("boom")
	if err := db.Tx(ctx, func(*sql.Tx) error { return boom }); !errors.Is(err, governor.ErrDenied) {
		t.Fatalf("a ninth transaction: %v, want ErrDenied", err)
	}
	ctx2, _ := task(t, c, governor.Spec{Name: "rollback"})
	err = db.Tx(ctx2, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO pages (url) VALUES ('rolled-back')`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v, want fn's error", err)
	}
	if err := sqlDB.QueryRow(`SELECT count(*) FROM pages`).Scan(&rows); err != nil || rows != 8 {
		t.Fatalf("%d rows after a failed transaction (%v), want 8", rows, err)
	}
	if _, err := governor.Consume(context.Background(), "sql", 1); !errors.Is(err, governor.ErrNoTask) {
		t.Fatal(err)
	}
}

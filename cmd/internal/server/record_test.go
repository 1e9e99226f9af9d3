package server

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"github.com/jackc/pgx/v5"

	"governor.dev/governor/cmd/internal/pgtest"
	"governor.dev/governor/cmd/internal/testclock"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

func TestMain(m *testing.M) {
	if os.Getenv(wideClientEnv) != "" {
		os.Exit(wideClient())
	}
	if args := os.Getenv(quietClientEnv); args != "" {
		os.Exit(quietClient(args))
	}
	os.Exit(pgtest.Main(m))
}

// holdCommits blocks every commit to a PostgreSQL record until the
// returned function is called.
func holdCommits(t *testing.T, dsn string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE events IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = tx.Rollback(ctx)
			_ = conn.Close(ctx)
		})
	}
	t.Cleanup(release)
	return release
}

// quiet asserts that nothing arrives on ch for a while: an answer that
// arrived would have been given from state not yet on record.
func quiet[T any](t *testing.T, what string, ch <-chan T) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s answered before the record held what it depends on: %v", what, v)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestAnswersWaitForTheRecord: reads and refusals that depend on a change
// not yet on record are not answered until it is.
func TestAnswersWaitForTheRecord(t *testing.T) {
	dsn := pgtest.DSN(t)
	e := newEnv(t, dsn)
	ctx := context.Background()
	a, _ := e.session(keyA)
	job := create(t, a, 0, "job")
	nodes := e.store.Engine.Stats().Nodes

	release := holdCommits(t, dsn)
	created := make(chan error, 1)
	go func() {
		created <- call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{ParentId: job, Spec: &governorv1.NodeSpec{Name: "child"}})))
	}()
	eventually(t, "the engine to apply the create", func() bool { return e.store.Engine.Stats().Nodes == nodes+1 })
	read := make(chan *governorv1.GetNodeResponse, 1)
	go func() {
		res, err := a.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: job, IncludeChildren: true}))
		if err != nil {
			t.Error(err)
			read <- nil
			return
		}
		read <- res.Msg
	}()
	refused := make(chan error, 1)
	go func() { refused <- call(a.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{}))) }()
	quiet(t, "the create", created)
	quiet(t, "a read", read)
	quiet(t, "a refusal", refused)

	release()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if res := <-read; res == nil || len(res.Children) != 1 {
		t.Fatalf("the read after the commit: %+v", res)
	}
	if err := <-refused; code(err) != "permission_denied" {
		t.Fatalf("the refusal: %v", err)
	}
}

// TestRecordLostIsUnavailable: once a commit fails, every answer is
// Unavailable, never one from state the record does not hold.
func TestRecordLostIsUnavailable(t *testing.T) {
	dsn := pgtest.DSN(t)
	e := &env{t: t, url: dsn, clock: testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), logs: &logSink{}}
	e.writer.CommitTimeout = 200 * time.Millisecond
	e.start()
	t.Cleanup(e.stop)
	ctx := context.Background()
	a, _ := e.session(keyA)

	holdCommits(t, dsn)
	err := call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "lost"}})))
	if code(err) != "unavailable" || !strings.Contains(err.Error(), "lost its record") {
		t.Fatalf("a change whose commit failed: want unavailable, got %v", err)
	}
	if err := call(a.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{}))); code(err) != "unavailable" {
		t.Fatalf("a read after the failure: want unavailable, got %v", err)
	}
	res, err := grpchealth.NewClient(e.h2c, e.http.URL).Check(ctx, &grpchealth.CheckRequest{})
	if err != nil || res.Status != grpchealth.StatusNotServing {
		t.Fatalf("health after the failure: %v %+v", err, res)
	}
}

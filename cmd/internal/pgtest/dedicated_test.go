package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestDedicatedServerIsKilledAndStartedAgain(t *testing.T) {
	d := StartDedicated(t)
	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, d.DSN())
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		return conn.Ping(ctx)
	}
	if err := ping(); err != nil {
		t.Fatalf("a fresh dedicated server: %v", err)
	}
	if err := d.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err == nil {
		t.Fatal("a killed server still answers")
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err != nil {
		t.Fatalf("the server started again does not answer: %v", err)
	}
}

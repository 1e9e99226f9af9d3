package durable

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// TestRestartBetweenASessionsEndAndItsSteps lets a session owning 40 nodes
// lapse and restarts before any step has ended them: once from a snapshot
// taken before the lapse and the record since, once from a snapshot taken
// after it. Each time the rebuilt engine
// equals the live one, and Reap on it ends every node cancelled at the
// lapse's instant for its owner's end.
func TestRestartBetweenASessionsEndAndItsSteps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, url string) {
		clk := newClock()
		ctx := context.Background()
		s := open(t, url, clk, 0)
		e, sys := s.Engine, &engine.Call{}
		var tenant engine.NodeInfo
		must(t, do(t, s, sys, func(c *engine.Call) (err error) {
			tenant, _, err = e.Ensure(c, engine.RootID, engine.Spec{Name: "acme"}, nil)
			return err
		}))
		var sess engine.SessionInfo
		must(t, do(t, s, sys, func(c *engine.Call) (err error) {
			sess, err = e.OpenSession(c, tenant.ID, time.Second, tok(1))
			return err
		}))
		var owned []engine.ID
		for i := range 40 {
			must(t, do(t, s, &engine.Call{Session: sess.ID}, func(c *engine.Call) error {
				n, err := e.Create(c, 0, engine.Spec{Name: fmt.Sprint("n", i)})
				owned = append(owned, n.ID)
				return err
			}))
		}
		must(t, s.SnapshotNow(ctx)) // the nodes are on it unmarked
		clk.Advance(2 * time.Second)
		lapsed := clk.Now().UnixNano()
		must(t, do(t, s, sys, func(c *engine.Call) error { _, _, _, err := e.Describe(c, tenant.ID, nil); return err }))
		clk.Advance(time.Second)
		must(t, do(t, s, sys, func(c *engine.Call) error { // the record's instant is past the lapse
			_, _, err := e.Ensure(c, engine.RootID, engine.Spec{Name: "other"}, nil)
			return err
		}))
		want := e.Dump()
		for _, how := range []string{"the record", "a snapshot"} {
			if how == "a snapshot" {
				must(t, s.SnapshotNow(ctx))
			}
			must(t, s.Close(ctx))
			s = open(t, url, clk, 0)
			if got := s.Engine.Dump(); !reflect.DeepEqual(got, want) {
				t.Fatalf("restarted from %s between the session's end and its steps, the engine differs from the live one", how)
			}
		}
		defer s.Close(ctx)
		must(t, do(t, s, sys, func(c *engine.Call) error { s.Engine.Reap(c); return nil }))
		for _, id := range owned {
			inf, _, _, err := s.Engine.Describe(sys, id, nil)
			if err != nil || inf.State != engine.Cancelled || !inf.OwnerEnded || inf.Ended != lapsed {
				t.Fatalf("owned node %d after the steps: %+v, %v; want cancelled at %d for its owner's end", id, inf, err, lapsed)
			}
		}
	})
}

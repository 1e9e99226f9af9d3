package governor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A refused consume explains itself: both spent quotas on its chain, not
// only the one the refusal named, and no estimate, since quotas never
// refill.
func TestDeniedConsumeExplainsEveryBindingCap(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, parent := task(t, c, Spec{Name: "parent", Quotas: map[string]int64{"tok": 2}})
	sub, child, err := NewTask(ctx, Spec{Name: "child", Quotas: map[string]int64{"tok": 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	if _, err := Consume(sub, "tok", 2); err != nil {
		t.Fatal(err)
	}
	_, err = Consume(sub, "tok", 1)
	var d *DeniedError
	if !errors.As(err, &d) {
		t.Fatalf("consume past the quotas: %v, want a *DeniedError", err)
	}
	x, err := d.Explain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if x.NodeID != child.ID() || x.Name != "tok" || x.Amount != 1 || len(x.Caps) != 2 {
		t.Fatalf("explanation %+v, want tok on the child with two binding caps", x)
	}
	for i, want := range []uint64{child.ID(), parent.ID()} {
		if b := x.Caps[i]; b.Kind != "quota" || b.NodeID != want || b.Used != 2 || b.Limit != 2 {
			t.Errorf("cap %d: %+v, want the spent quota of node %d", i, b, want)
		}
	}
	if !x.Estimate.At.IsZero() || x.Estimate.Unknown == "" {
		t.Errorf("estimate %+v, want unknown", x.Estimate)
	}
	if _, err := (&DeniedError{}).Explain(context.Background()); err == nil {
		t.Error("a refusal not made on a task explained itself")
	}
}

// Client.Explain on a full limit gives the holder, the place of the waiter
// and an estimate at the end of the hold or of the holder's session.
func TestClientExplainsAWaitingAcquire(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "pool", Limits: map[string]int64{"gpu": 1}})
	l, err := Acquire(ctx, "gpu", WithMaxHold(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(Report{})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go Acquire(wctx, "gpu")
	var x *Explanation
	for x == nil || x.Waiting == nil {
		if x, err = c.Explain(ctx, tk.ID(), "gpu", 0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(x.Caps) != 1 || len(x.Caps[0].Holders) != 1 || x.Caps[0].Holders[0].LeaseID != l.ID {
		t.Fatalf("caps %+v, want the full limit held by lease %d", x.Caps, l.ID)
	}
	h := x.Caps[0].Holders[0]
	if x.Waiting.Place != 1 || !x.Estimate.At.Equal(h.EndsBy) || len(x.Estimate.Basis) != 1 || x.Estimate.Basis[0].Kind != h.Basis {
		t.Errorf("waiting %+v estimate %+v, want first in line, until the holder ends by %s (%s)", x.Waiting, x.Estimate, h.EndsBy, h.Basis)
	}
	if _, err := c.Explain(ctx, tk.ID(), "Bad Name", 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("a bad name: %v, want ErrInvalid", err)
	}
}

func ExampleDeniedError_Explain() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "crawl", Quotas: map[string]int64{"http": 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()
	sub, page, err := NewTask(ctx, Spec{Name: "page", Quotas: map[string]int64{"http": 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer page.Close()
	_, _ = Consume(sub, "http", 2)

	// The refusal names the first cap it met; its explanation lists
	// every cap on the chain that binds, and when it could go ahead.
	_, err = Consume(sub, "http", 1)
	var denied *DeniedError
	if !errors.As(err, &denied) {
		fmt.Println(err)
		return
	}
	x, err := denied.Explain(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range x.Caps {
		fmt.Printf("%s on %s: %d of %d used\n", c.Kind, c.NodeName, c.Used, c.Limit)
	}
	fmt.Println("estimate known:", !x.Estimate.At.IsZero())
	// Output:
	// quota on page: 2 of 2 used
	// quota on crawl: 2 of 2 used
	// estimate known: false
}

package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// invalidWorld is tenant a with a task, a session on a holding a lease, and
// a chain of nodes down to the deepest level the tree allows.
type invalidWorld struct {
	f         *fixture
	ten, task ID
	deepest   ID
	s         ID
	lease     LeaseInfo
}

func newInvalidWorld(t *testing.T) *invalidWorld {
	f := newFixture(t)
	w := &invalidWorld{f: f}
	w.ten = f.tenant(Spec{Name: "a"})
	w.s = f.session(w.ten, 0)
	w.task = f.create(w.s, 0, Spec{Name: "task"})
	w.lease = f.grant(w.s, w.task, "db")
	w.deepest = w.task
	for d := 3; d <= MaxDepth; d++ {
		w.deepest = f.create(w.s, w.deepest, Spec{Name: fmt.Sprint("d", d)})
	}
	if got := f.describe(w.deepest).Depth; got != MaxDepth {
		t.Fatalf("the chain is %d deep, want %d", got, MaxDepth)
	}
	return w
}

func manyCaps(n int) map[string]int64 {
	m := make(map[string]int64, n)
	for i := range n {
		m[fmt.Sprint("k", i)] = 1
	}
	return m
}

// TestInvalidInput checks that every argument out of bounds is refused with
// an error matching ErrInvalid that names the field, and changes nothing.
func TestInvalidInput(t *testing.T) {
	long := strings.Repeat("x", 257)
	create := func(sp Spec) func(w *invalidWorld) error {
		return func(w *invalidWorld) error {
			_, err := w.f.e.Create(&Call{Session: w.s}, w.task, sp)
			return err
		}
	}
	ensure := func(sp Spec, ch *Charge) func(w *invalidWorld) error {
		return func(w *invalidWorld) error {
			_, _, err := w.f.e.Ensure(&Call{Session: w.s}, w.task, sp, ch)
			return err
		}
	}
	consume := func(res string, n int64) func(w *invalidWorld) error {
		return func(w *invalidWorld) error { return w.f.e.Consume(&Call{Session: w.s}, w.task, res, n) }
	}
	acquire := func(daemon bool, req, class string, hold time.Duration) func(w *invalidWorld) error {
		return func(w *invalidWorld) error {
			c := &Call{Session: w.s, Request: req}
			if daemon {
				c.Session = 0
			}
			_, _, err := w.f.e.Acquire(c, w.task, class, hold)
			return err
		}
	}
	defaults := func(d Defaults) func(w *invalidWorld) error {
		return func(w *invalidWorld) error { return w.f.e.SetDefaults(&Call{Session: w.s}, w.task, d) }
	}
	cases := []struct {
		name  string
		op    func(w *invalidWorld) error
		field string
	}{
		{"create: empty name", create(Spec{}), "name"},
		{"create: name of 257 bytes", create(Spec{Name: long}), "name"},
		{"create: name not UTF-8", create(Spec{Name: "\xff"}), "name"},
		{"create: quota key upper case", create(Spec{Name: "n", Quotas: map[string]int64{"Http": 1}}), "quotas key"},
		{"create: quota key starts with a digit", create(Spec{Name: "n", Quotas: map[string]int64{"1x": 1}}), "quotas key"},
		{"create: quota key empty", create(Spec{Name: "n", Quotas: map[string]int64{"": 1}}), "quotas key"},
		{"create: quota key of 65", create(Spec{Name: "n", Quotas: map[string]int64{strings.Repeat("k", 65): 1}}), "quotas key"},
		{"create: quota key with a space", create(Spec{Name: "n", Quotas: map[string]int64{"a b": 1}}), "quotas key"},
		{"create: negative quota", create(Spec{Name: "n", Quotas: map[string]int64{"http": -1}}), "quotas.http"},
		{"create: 65 quotas", create(Spec{Name: "n", Quotas: manyCaps(65)}), "quotas"},
		{"create: limit key", create(Spec{Name: "n", Limits: map[string]int64{"DB": 1}}), "limits key"},
		{"create: negative limit", create(Spec{Name: "n", Limits: map[string]int64{"db": -1}}), "limits.db"},
		{"create: 65 limits", create(Spec{Name: "n", Limits: manyCaps(65)}), "limits"},
		{"create: negative deadline", create(Spec{Name: "n", Deadline: -1}), "deadline"},
		{"create: negative weight", create(Spec{Name: "n", Weight: -1}), "weight"},
		{"create: weight 1001", create(Spec{Name: "n", Weight: 1001}), "weight"},
		{"create: priority 1001", create(Spec{Name: "n", Priority: 1001}), "priority"},
		{"create: priority -1001", create(Spec{Name: "n", Priority: -1001}), "priority"},
		{"create: below depth 32", func(w *invalidWorld) error {
			_, err := w.f.e.Create(&Call{Session: w.s}, w.deepest, Spec{Name: "n"})
			return err
		}, "parent"},
		{"ensure: below depth 32", func(w *invalidWorld) error {
			_, _, err := w.f.e.Ensure(&Call{Session: w.s}, w.deepest, Spec{Name: "n"}, nil)
			return err
		}, "parent"},
		{"create: request id of 257 bytes", func(w *invalidWorld) error {
			_, err := w.f.e.Create(&Call{Session: w.s, Request: long}, w.task, Spec{Name: "n"})
			return err
		}, "request_id"},
		{"ensure: empty name", ensure(Spec{}, nil), "name"},
		{"ensure: weight 1001", ensure(Spec{Name: "n", Weight: 1001}, nil), "weight"},
		{"ensure: charge resource", ensure(Spec{Name: "n"}, &Charge{Resource: "HTTP", Amount: 1}), "charge.resource"},
		{"ensure: charge of 0", ensure(Spec{Name: "n"}, &Charge{Resource: "http"}), "charge.amount"},
		{"ensure: negative charge", ensure(Spec{Name: "n"}, &Charge{Resource: "http", Amount: -2}), "charge.amount"},
		{"consume: 0", consume("http", 0), "amount"},
		{"consume: negative", consume("http", -1), "amount"},
		{"consume: empty resource", consume("", 1), "resource"},
		{"consume: resource upper case", consume("HTTP", 1), "resource"},
		{"consume: request id of 257 bytes", func(w *invalidWorld) error {
			return w.f.e.Consume(&Call{Session: w.s, Request: long}, w.task, "http", 1)
		}, "request_id"},
		{"acquire: empty class", acquire(false, "", "", 0), "class"},
		{"acquire: class with a slash", acquire(false, "", "db/1", 0), "class"},
		{"acquire: negative max hold", acquire(false, "", "db", -time.Nanosecond), "max_hold"},
		{"acquire: by the daemon", acquire(true, "", "db", 0), "session"},
		{"acquire: request id of 257 bytes", acquire(false, long, "db", 0), "request_id"},
		{"release: negative latency", func(w *invalidWorld) error {
			_, err := w.f.e.Release(&Call{Session: w.s}, w.lease.ID, Report{LatencyNanos: -1})
			return err
		}, "latency"},
		{"release: request id of 257 bytes", func(w *invalidWorld) error {
			_, err := w.f.e.Release(&Call{Session: w.s, Request: long}, w.lease.ID, Report{})
			return err
		}, "request_id"},
		{"cancel: request id of 257 bytes", func(w *invalidWorld) error {
			return w.f.e.Cancel(&Call{Session: w.s, Request: long}, w.task)
		}, "request_id"},
		{"set quota: resource", func(w *invalidWorld) error {
			return w.f.e.SetQuota(&Call{Session: w.s}, w.task, "Http", ptr(1))
		}, "resource"},
		{"set quota: negative", func(w *invalidWorld) error {
			return w.f.e.SetQuota(&Call{Session: w.s}, w.task, "http", ptr(-1))
		}, "value"},
		{"set limit: class", func(w *invalidWorld) error {
			return w.f.e.SetLimit(&Call{Session: w.s}, w.task, "", ptr(1))
		}, "class"},
		{"set limit: negative", func(w *invalidWorld) error {
			return w.f.e.SetLimit(&Call{Session: w.s}, w.task, "db", ptr(-1))
		}, "value"},
		{"set limit: request id of 257 bytes", func(w *invalidWorld) error {
			return w.f.e.SetLimit(&Call{Session: w.s, Request: long}, w.task, "db", ptr(1))
		}, "request_id"},
		{"set defaults: quota key", defaults(Defaults{Caps: Caps{Quotas: map[string]int64{"X": 1}}}), "defaults.quotas key"},
		{"set defaults: negative limit", defaults(Defaults{Caps: Caps{Limits: map[string]int64{"db": -1}}}), "defaults.limits.db"},
		{"set defaults: children's negative quota",
			defaults(Defaults{Children: &Caps{Quotas: map[string]int64{"http": -1}}}), "defaults.children.quotas.http"},
		{"set defaults: children's limit key",
			defaults(Defaults{Children: &Caps{Limits: map[string]int64{"-db": 1}}}), "defaults.children.limits key"},
		{"set defaults: 65 quotas", defaults(Defaults{Caps: Caps{Quotas: manyCaps(65)}}), "defaults.quotas"},
		{"open session: negative ttl", func(w *invalidWorld) error {
			_, err := w.f.e.OpenSession(w.f.sys(), w.ten, -time.Second, token(99))
			return err
		}, "ttl"},
		{"open session: a token in use", func(w *invalidWorld) error {
			_, err := w.f.e.OpenSession(w.f.sys(), w.ten, time.Second, token(1))
			return err
		}, "token"},
		{"heartbeat: by the daemon", func(w *invalidWorld) error {
			_, err := w.f.e.Heartbeat(w.f.sys())
			return err
		}, "session"},
		{"close session: by the daemon", func(w *invalidWorld) error { return w.f.e.CloseSession(w.f.sys()) }, "session"},
		{"configure: negative tombstone ttl", func(w *invalidWorld) error {
			return w.f.e.Configure(w.f.sys(), Settings{TombstoneTTL: -1})
		}, "tombstone_ttl"},
		{"configure: negative retention", func(w *invalidWorld) error {
			return w.f.e.Configure(w.f.sys(), Settings{NodeRetention: -1})
		}, "node_retention"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newInvalidWorld(t)
			before := w.f.e.Dump()
			wantInvalid(t, tc.op(w), tc.field)
			sameState(t, w.f.e, before)
		})
	}
}

// wantInvalid fails the test unless err is an *InvalidError of field whose
// message starts with the field's name.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var ie *InvalidError
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &ie) || ie.Field != field {
		t.Fatalf("got %v, want an invalid %s", err, field)
	}
	if !strings.HasPrefix(err.Error(), field+": ") {
		t.Fatalf("message %q does not name %s", err, field)
	}
}

// TestValidBounds checks that the values at each bound are accepted.
func TestValidBounds(t *testing.T) {
	w := newInvalidWorld(t)
	specs := []Spec{
		{Name: strings.Repeat("x", 256)},
		{Name: "é"},
		{Name: "n", Weight: 1000, Priority: 1000},
		{Name: "n", Priority: -1000},
		{Name: "n", Quotas: manyCaps(64), Limits: manyCaps(64)},
		{Name: "n", Quotas: map[string]int64{"a": 0, strings.Repeat("k", 64): 1, "a0_.-": 1}},
	}
	for i, sp := range specs {
		if _, err := w.f.e.Create(&Call{Session: w.s, Request: fmt.Sprintf("%0256d", i)}, w.task, sp); err != nil {
			t.Fatalf("create %.20q: %v", sp.Name, err)
		}
	}
	if _, _, err := w.f.e.Acquire(&Call{Session: w.s, Request: strings.Repeat("r", 256)}, w.deepest, "db", 0); err != nil {
		t.Fatalf("acquire at depth %d with a request id of 256 bytes: %v", MaxDepth, err)
	}
}

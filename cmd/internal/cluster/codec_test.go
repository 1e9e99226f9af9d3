package cluster

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

func ptr[T any](v T) *T { return &v }

// sampleCommands returns, for every op, a command with every field that op
// reads set to something other than its zero value.
func sampleCommands() map[Op]*Command {
	rate := engine.Rate{Limit: 5, Period: time.Second, Burst: 9, Zone: "Europe/Paris"}
	caps := engine.Caps{Quotas: map[string]int64{"tokens": 100}, Limits: map[string]int64{"gpu": 2}, Rates: map[string]engine.Rate{"calls": rate}}
	spec := &engine.Spec{Name: "job", Quotas: caps.Quotas, Limits: caps.Limits, Rates: caps.Rates, Deadline: 99, Weight: 3, Priority: -2,
		Retention: time.Hour, Detached: true}
	base := Command{Now: 1_700_000_000_000_000_000, Session: 7, Request: "req-1", Target: 12}
	with := func(op Op, f func(c *Command)) *Command {
		c := base
		c.Op = op
		f(&c)
		return &c
	}
	samples := map[Op]*Command{
		OpCreate:  with(OpCreate, func(c *Command) { c.Spec = spec }),
		OpEnsure:  with(OpEnsure, func(c *Command) { c.Spec = spec; c.Charge = &engine.Charge{Resource: "tokens", Amount: 4} }),
		OpConsume: with(OpConsume, func(c *Command) { c.Name = "tokens"; c.Amount = -3 }),
		OpConsumeWith: with(OpConsumeWith, func(c *Command) {
			c.Name, c.Amount, c.Options = "tokens", 8, engine.ConsumeOptions{MaxWait: time.Minute, Drain: true}
		}),
		OpConsumeKeyed: with(OpConsumeKeyed, func(c *Command) {
			c.Keyed = &engine.KeyedLimit{Parent: 3, Group: "ip", Key: "10.0.0.1", Resource: "calls", Rate: rate, Reset: true}
			c.Amount, c.Options = 1, engine.ConsumeOptions{Drain: true}
		}),
		OpCancel:       with(OpCancel, func(*Command) {}),
		OpClose:        with(OpClose, func(*Command) {}),
		OpAcquire:      with(OpAcquire, func(c *Command) { c.Name, c.Span = "gpu", 3*time.Second }),
		OpRelease:      with(OpRelease, func(c *Command) { c.Report = engine.Report{LatencyNanos: 1234, Overloaded: true} }),
		OpAbandon:      with(OpAbandon, func(c *Command) { c.Waiter = 77 }),
		OpOpenSession:  with(OpOpenSession, func(c *Command) { c.Span = time.Minute; c.Token = [32]byte{1, 2, 3, 31: 9} }),
		OpHeartbeat:    with(OpHeartbeat, func(c *Command) { c.Renew = []engine.ID{5, 300, 1 << 40} }),
		OpCloseSession: with(OpCloseSession, func(*Command) {}),
		OpSetQuota:     with(OpSetQuota, func(c *Command) { c.Name, c.Value = "tokens", ptr(int64(0)) }),
		OpSetLimit:     with(OpSetLimit, func(c *Command) { c.Name, c.Value = "gpu", ptr(int64(4)) }),
		OpAdjustLimit: with(OpAdjustLimit, func(c *Command) {
			c.Name, c.Value, c.Amount = "gpu", ptr(int64(4)), 3
			c.Adapt = engine.Adapt{Samples: 50, P95Nanos: 1e9, OverloadShare: 0.25, Reason: "p95 above target"}
		}),
		OpSetDefaults: with(OpSetDefaults, func(c *Command) {
			c.Defaults = &engine.Defaults{Caps: caps, Children: &engine.Caps{Limits: caps.Limits}}
		}),
		OpSetRate:   with(OpSetRate, func(c *Command) { c.Name, c.Rate = "calls", &rate }),
		OpResetRate: with(OpResetRate, func(c *Command) { c.Name = "calls" }),
		OpConfigure: with(OpConfigure, func(c *Command) {
			c.Settings = &engine.Settings{TombstoneTTL: time.Minute, NodeRetention: time.Hour, MaxScheduleWait: time.Second, KeyIdle: time.Minute}
		}),
		OpSetBounds: with(OpSetBounds, func(c *Command) {
			c.Bounds = &engine.BoundsConfig{Default: engine.DefaultBounds(), PerTenant: map[engine.ID]engine.Bounds{4: {1, 2, 3, 4, 5}}, Declared: []string{"acme"}}
		}),
		OpReap:       with(OpReap, func(*Command) {}),
		OpChecksum:   with(OpChecksum, func(*Command) {}),
		OpCompare:    with(OpCompare, func(c *Command) { c.Waiter, c.Sum = 41, 0xdeadbeefcafef00d }),
		OpRevive:     with(OpRevive, func(*Command) {}),
		OpMember:     with(OpMember, func(c *Command) { c.Name, c.API = "n4", "10.0.0.4:7600" }),
		OpTryAcquire: with(OpTryAcquire, func(c *Command) { c.Name, c.Span = "gpu", 3*time.Second }),
	}
	samples[OpBatch] = with(OpBatch, func(c *Command) {
		c.Batch = []*Command{samples[OpConsume], samples[OpConsumeWith], samples[OpConsumeKeyed]}
	})
	return samples
}

func TestEveryCommandRoundTrips(t *testing.T) {
	samples := sampleCommands()
	for op := Op(1); op < opEnd; op++ {
		c := samples[op]
		if c == nil {
			t.Fatalf("no sample command for op %v", op)
		}
		got, err := DecodeCommand(c.Encode())
		if err != nil {
			t.Fatalf("%v: decode: %v", op, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("%v: round trip changed the command:\n got %+v\nwant %+v", op, got, c)
		}
	}
}

func TestSetPointersRoundTripAsSet(t *testing.T) {
	c := &Command{Op: OpSetRate, Value: ptr(int64(0)), Rate: &engine.Rate{}}
	got, err := DecodeCommand(c.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Value == nil || *got.Value != 0 || got.Rate == nil {
		t.Fatalf("a pointer set to zero came back as %v, %v; want set", got.Value, got.Rate)
	}
	got, err = DecodeCommand((&Command{Op: OpSetRate}).Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Value != nil || got.Rate != nil {
		t.Fatalf("unset pointers came back set: %v, %v", got.Value, got.Rate)
	}
}

func TestDecodeRefusesBadCommands(t *testing.T) {
	good := sampleCommands()[OpHeartbeat].Encode()
	for name, data := range map[string][]byte{
		"empty":              nil,
		"unknown op":         (&Command{Op: opEnd}).Encode(),
		"truncated":          good[:len(good)-1],
		"wrong type":         {byte(fOp<<3 | 2), 1, 0},
		"short token":        append((&Command{Op: OpOpenSession}).Encode(), byte(fToken<<3|2), 1, 7),
		"bounds too few":     append((&Command{Op: OpSetBounds}).Encode(), byte(fBounds<<3|2), 3, 1<<3|2, 1, 5),
		"acquire in a batch": (&Command{Op: OpBatch, Batch: []*Command{{Op: OpAcquire, Target: 3}}}).Encode(),
		"batch in a batch":   (&Command{Op: OpBatch, Batch: []*Command{{Op: OpBatch}}}).Encode(),
		"corrupt in a batch": (&Command{Op: OpBatch, Batch: []*Command{{Op: opEnd}}}).Encode(),
	} {
		if _, err := DecodeCommand(data); !errors.Is(err, ErrCorruptCommand) {
			t.Errorf("%s: got %v, want ErrCorruptCommand", name, err)
		}
	}
}

func FuzzDecodeCommand(f *testing.F) {
	for _, c := range sampleCommands() {
		f.Add(c.Encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCommand(data)
		if err != nil {
			return
		}
		once := c.Encode()
		again, err := DecodeCommand(once)
		if err != nil {
			t.Fatalf("a decoded command's encoding does not decode: %v", err)
		}
		if twice := again.Encode(); !bytes.Equal(once, twice) {
			t.Fatalf("encoding is not stable:\n%x\n%x", once, twice)
		}
	})
}

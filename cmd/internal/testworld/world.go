// Package testworld builds engines in the shapes that benchmarks measure,
// through the engine's API, on a fake clock.
package testworld

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
)

// World is an engine on a clock the builder moves.
type World struct {
	Clock  *testclock.Clock
	Engine *engine.Engine
}

// New returns an empty world whose engine hands its events to sink (nil
// discards them).
func New(sink engine.Sink) *World {
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return &World{Clock: clock, Engine: engine.New(engine.Options{Clock: clock, Sink: sink})}
}

// IdleTenantNodes is how many nodes IdleTenant adds.
const IdleTenantNodes = 1 + 80*11 + 1 + 119

// IdleTenant adds tenant number t as agents and rate-limited keys leave a
// tenant after a while of work, IdleTenantNodes nodes in all. The tenant
// caps tokens and an llm class and gives its tasks a tokens cap and their
// children one; one session creates 80 tasks of 10 children each, every
// child charged tokens once; a third of the tasks are closed, and stay
// within the retention with their children; and a keyed group holds 119
// keys with a rate cap, each consumed once. Then the clock moves 1 ms.
// Every name is a string of its own, as a request decoder hands them over.
func (w *World) IdleTenant(tb testing.TB, t int) {
	tb.Helper()
	e, sys := w.Engine, &engine.Call{}
	ten, err := e.Create(sys, engine.RootID, engine.Spec{
		Name:   "tenant" + strconv.Itoa(t),
		Quotas: map[string]int64{fresh("tokens"): math.MaxInt64 / 4}, Limits: map[string]int64{fresh("llm"): 8},
	})
	check(tb, err)
	check(tb, e.SetDefaults(sys, ten.ID, engine.Defaults{
		Caps:     engine.Caps{Quotas: map[string]int64{fresh("tokens"): 1 << 40}},
		Children: &engine.Caps{Quotas: map[string]int64{fresh("tokens"): 1 << 30}},
	}))
	s, err := e.OpenSession(sys, ten.ID, 0, [32]byte{byte(t), byte(t >> 8), byte(t >> 16), byte(t >> 24), 1})
	check(tb, err)
	c := &engine.Call{Session: s.ID}
	for k := range 80 {
		task, err := e.Create(c, 0, engine.Spec{Name: "task" + strconv.Itoa(k)})
		check(tb, err)
		for j := range 10 {
			_, _, err := e.Ensure(c, task.ID, engine.Spec{Name: "step" + strconv.Itoa(j)}, &engine.Charge{Resource: fresh("tokens"), Amount: 100})
			check(tb, err)
		}
		if k%3 == 0 {
			check(tb, e.Close(c, task.ID))
		}
	}
	for k := range 119 {
		kl := engine.KeyedLimit{
			Group: fresh("api"), Key: "user" + strconv.Itoa(k), Resource: fresh("requests"),
			Rate: engine.Rate{Limit: 100, Period: time.Second},
		}
		_, err := e.ConsumeKeyed(c, kl, 1, engine.ConsumeOptions{})
		check(tb, err)
	}
	w.Clock.Advance(time.Millisecond)
}

// fresh returns a copy of s in memory of its own.
func fresh(s string) string { return strings.Clone(s) }

func check(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

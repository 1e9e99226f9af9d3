package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

func equalSnapshots(a, b *Snapshot) bool { return reflect.DeepEqual(a, b) }

// untimedMemory drops the times of the sessions' remembered ids, which
// records written before those times were kept do not have, from a state
// to compare with one such a record gave.
func untimedMemory(st *Snapshot) *Snapshot {
	for i := range st.Sessions {
		for j := range st.Sessions[i].Mem {
			st.Sessions[i].Mem[j].At = 0
		}
	}
	return st
}

// visible drops the tombstones whose time is up at now: the live engine
// forgets them when it reaps, without an event, and no call can see them any
// more.
func visible(st *Snapshot, now int64) *Snapshot {
	out := *st
	out.Tombs = nil
	for _, t := range st.Tombs {
		if t.Until > now {
			out.Tombs = append(out.Tombs, t)
		}
	}
	return &out
}

// diffSnapshots names the first records that differ.
func diffSnapshots(a, b *Snapshot) string {
	var sb strings.Builder
	line := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) && sb.Len() < 4000 {
			xj, _ := json.Marshal(x)
			yj, _ := json.Marshal(y)
			fmt.Fprintf(&sb, "%s:\n  got  %s\n  want %s\n", what, xj, yj)
		}
	}
	line("header", []any{a.Seq, a.Time, a.Next, a.Settings}, []any{b.Seq, b.Time, b.Next, b.Settings})
	for i := 0; i < len(a.Nodes) || i < len(b.Nodes); i++ {
		line(fmt.Sprint("node #", i), at(a.Nodes, i), at(b.Nodes, i))
	}
	for i := 0; i < len(a.Sessions) || i < len(b.Sessions); i++ {
		line(fmt.Sprint("session #", i), at(a.Sessions, i), at(b.Sessions, i))
	}
	line("leases", a.Leases, b.Leases)
	line("tombs", a.Tombs, b.Tombs)
	return sb.String()
}

func at[T any](s []T, i int) any {
	if i < len(s) {
		return s[i]
	}
	return nil
}

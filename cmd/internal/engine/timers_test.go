package engine

import (
	"slices"
	"testing"
)

// TestTimerQueue pushes entries in several orders, taking some on the way,
// and checks that due hands out every entry, earliest first, and only once
// its time has come.
func TestTimerQueue(t *testing.T) {
	cases := []struct {
		name string
		at   []int64 // pushed in this order
		take int     // entries taken (at their time) after the first half is pushed
	}{
		{name: "in time order", at: []int64{1, 2, 3, 4, 5, 6}},
		{name: "one earlier than the last", at: []int64{5, 6, 7, 3, 8, 9}},
		{name: "decreasing", at: []int64{9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{name: "equal times", at: []int64{4, 4, 4, 2, 2, 4, 4}},
		{name: "a shorter ttl after a longer one", at: []int64{60, 61, 62, 10, 11, 63, 12}},
		{name: "many taken on the way", at: seq(1, 400), take: 150},
		{name: "interleaved lanes, many taken", at: interleave(seq(1000, 1300), seq(1, 300)), take: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var q timerQueue
			half := len(tc.at) / 2
			var got []int64
			for i, at := range tc.at[:half] {
				q.push(timerEntry{at: at, id: ID(i)})
			}
			first := slices.Sorted(slices.Values(tc.at[:half]))
			for _, at := range first[:tc.take] {
				if x, ok := q.due(at - 1); ok {
					t.Fatalf("entry at %d is still there at %d, after the earlier ones were taken", x.at, at-1)
				}
				x, ok := q.due(at)
				if !ok {
					t.Fatalf("nothing due at %d", at)
				}
				got = append(got, x.at)
			}
			for i, at := range tc.at[half:] {
				q.push(timerEntry{at: at, id: ID(half + i)})
			}
			for {
				x, ok := q.due(1 << 40)
				if !ok {
					break
				}
				got = append(got, x.at)
			}
			want := slices.Sorted(slices.Values(tc.at))
			if tc.take > 0 {
				rest := slices.Sorted(slices.Values(append(slices.Clone(first[tc.take:]), tc.at[half:]...)))
				want = append(slices.Clone(first[:tc.take]), rest...)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("taken in the order %v, want %v", got, want)
			}
		})
	}
}

func seq(from, to int64) []int64 {
	var out []int64
	for v := from; v < to; v++ {
		out = append(out, v)
	}
	return out
}

func interleave(a, b []int64) []int64 {
	var out []int64
	for i := range max(len(a), len(b)) {
		if i < len(a) {
			out = append(out, a[i])
		}
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

package tui

import "testing"

func TestUsageLevels(t *testing.T) {
	c := func(v int64) *int64 { return &v }
	cases := []struct {
		used int64
		cap  *int64
		want level
	}{
		{0, nil, calm}, {1_000_000, nil, calm},
		{0, c(10), calm}, {7, c(10), calm}, {8, c(10), warning}, {9, c(10), warning},
		{10, c(10), spent}, {11, c(10), spent}, {0, c(0), spent},
		{3, c(5), calm}, {4, c(5), warning}, {799, c(1000), calm}, {800, c(1000), warning},
	}
	for _, tc := range cases {
		if got := levelOf(tc.used, tc.cap); got != tc.want {
			t.Errorf("levelOf(%d, %v) = %d, want %d", tc.used, tc.cap, got, tc.want)
		}
	}
}

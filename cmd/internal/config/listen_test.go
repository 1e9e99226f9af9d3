package config

import "testing"

func TestOverlap(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"127.0.0.1:9000", "127.0.0.1:9000", true},
		{"localhost:9000", "127.0.0.1:9000", true},
		{":9000", "127.0.0.1:9000", true},
		{"[::]:9000", "10.0.0.1:9000", true},
		{"[::ffff:127.0.0.1]:9000", "127.0.0.1:9000", true},
		{"Gov.Internal:9000", "gov.internal:9000", true},
		{"127.0.0.1:9000", "127.0.0.1:9001", false},
		{"127.0.0.1:9000", "127.0.0.2:9000", false},
		{"127.0.0.1:0", "127.0.0.1:0", false},
		{":0", "127.0.0.1:0", false},
	}
	for _, c := range cases {
		if got := overlap(c.a, c.b); got != c.want {
			t.Errorf("overlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

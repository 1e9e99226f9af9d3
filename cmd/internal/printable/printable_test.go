package printable

import "testing"

// TestName checks that nothing a terminal acts on survives, and that
// printable names, in any script, are unchanged.
func TestName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"crawl-site", "crawl-site"},
		{"claude:3f6c 2a9e", "claude:3f6c 2a9e"},
		{"équipe-北京", "équipe-北京"},
		{"\x1b]0;owned\x07title", `\x1b]0;owned\atitle`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"rtl\u202eexe.txt", `rtl\u202eexe.txt`},
		{`back\slash`, `back\\slash`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"\uFFFD", "\uFFFD"},
	} {
		if got := Name(tc.in); got != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

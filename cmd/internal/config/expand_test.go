package config

import "testing"

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"A": "alpha", "EMPTY": "", "_B2": "b"})
	tests := []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "alpha"},
		{in: "x-${A}-${_B2}-y", want: "x-alpha-b-y"},
		{in: "${EMPTY}", want: ""},
		{in: "$$", want: "$"},
		{in: "$${A}", want: "${A}"},
		{in: "$$$${A}", want: "$${A}"},
		{in: "$$${A}", want: "$alpha"},
		{in: "$A and $", want: "$A and $"},
		{in: "${MISSING}", err: "environment variable MISSING is not set"},
		{in: "${A", err: "unclosed ${ (write $$ for a literal dollar)"},
		{in: "${}", err: "${}: not a variable name: use letters, digits and _, not starting with a digit"},
		{in: "${A-B}", err: "${A-B}: not a variable name: use letters, digits and _, not starting with a digit"},
		{in: "${9A}", err: "${9A}: not a variable name: use letters, digits and _, not starting with a digit"},
	}
	for _, tt := range tests {
		got, err := expand(tt.in, vars)
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("expand(%q) error = %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

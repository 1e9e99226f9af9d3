// Package printable makes text from governord safe to write to a terminal.
// A node's name is any UTF-8 a caller chose, so it may hold escape
// sequences that would move the cursor, rewrite the screen or change the
// window title of whoever prints it; the governor command and its screen
// print every name through Name.
package printable

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Name returns s with every rune that is not printable (control
// characters, C1 controls, DEL, format characters such as bidirectional
// overrides, invalid bytes) written as a Go escape: "\x1b", "\u202e". A
// backslash is doubled, so an escape in the output always stands for a
// rune that was not printable. Printable text, spaces included, is
// unchanged.
func Name(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case r == '\\':
			b.WriteString(`\\`)
		case r == ' ' || strconv.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// clean reports whether s needs no escape.
func clean(s string) bool {
	for _, r := range s {
		if r == '\\' || r == utf8.RuneError || r != ' ' && !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

package config

import (
	"errors"
	"fmt"
	"strings"
)

// errUnclosedVariable reports a ${ without its closing brace.
var errUnclosedVariable = errors.New("unclosed ${ (write $$ for a literal dollar)")

// Problem is one mistake in a configuration.
type Problem struct {
	// File is the configuration's name; empty for a Config built in code.
	File string
	// Line is the 1-based line the mistake is on; 0 when it has none, such
	// as a required key that is missing from an empty file.
	Line int
	// Path names the field, as in tenants[1].weight; empty for the file as
	// a whole.
	Path string
	// Message says what is wrong and what is allowed.
	Message string
}

// Error formats the problem as FILE:LINE: PATH: MESSAGE, leaving out the
// parts it lacks.
func (p Problem) Error() string {
	var b strings.Builder
	switch {
	case p.File != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", p.File, p.Line)
	case p.File != "":
		fmt.Fprintf(&b, "%s: ", p.File)
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error is every mistake found in one configuration, in line order. Parse,
// Load and Validate return it as a *Error.
type Error struct {
	// Problems holds at least one mistake.
	Problems []Problem
}

// Error lists the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

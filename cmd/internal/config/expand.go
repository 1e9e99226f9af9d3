package config

import (
	"fmt"
	"strings"
)

// expand replaces every ${NAME} in s with the environment variable NAME and
// every $$ with a single $. A $ followed by anything else stays as it is.
// An unset variable, a malformed name or an unclosed ${ is an error.
func expand(s string, getenv func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i == len(s)-1 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			s = s[i+2:]
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", errUnclosedVariable
			}
			name := s[i+2 : i+2+end]
			value, err := lookupVariable(name, getenv)
			if err != nil {
				return "", err
			}
			b.WriteString(value)
			s = s[i+3+end:]
		default:
			b.WriteByte('$')
			s = s[i+1:]
		}
	}
}

// lookupVariable returns the value of the environment variable name.
func lookupVariable(name string, getenv func(string) (string, bool)) (string, error) {
	if !isVariableName(name) {
		return "", fmt.Errorf("${%s}: not a variable name: use letters, digits and _, not starting with a digit", name)
	}
	value, ok := getenv(name)
	if !ok {
		return "", fmt.Errorf("environment variable %s is not set", name)
	}
	return value, nil
}

// isVariableName reports whether s matches [A-Za-z_][A-Za-z0-9_]*.
func isVariableName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

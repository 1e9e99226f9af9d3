package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DatabaseURLVariable names the environment variable that, when set,
// overrides database_url, even when set to "" (memory).
const DatabaseURLVariable = "GOVERNOR_DATABASE_URL"

// Load reads the configuration file at path with the process environment.
// A mistake in the file is returned as a *Error.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(data, path, os.LookupEnv)
}

// Parse reads a configuration from data. name is what messages call the
// file; getenv looks up the environment variables that ${VAR} names and
// GOVERNOR_DATABASE_URL. Keys the file leaves out keep their defaults. Every
// mistake is returned at once, as a *Error.
func Parse(data []byte, name string, getenv func(string) (string, bool)) (*Config, error) {
	root, problem := parseDocument(data)
	if problem != nil {
		problem.File = name
		return nil, &Error{Problems: []Problem{*problem}}
	}
	c := base()
	d := &decoder{getenv: getenv, lines: map[string]int{}}
	if root != nil {
		d.decode(root, reflect.ValueOf(c).Elem(), "")
	}
	if d.tooLarge {
		return nil, newError(name, d.problems)
	}
	problems := d.problems
	overridden := false
	if url, ok := getenv(DatabaseURLVariable); ok {
		c.DatabaseURL, overridden = url, true
	}
	c.resolve(d.lines)
	for _, p := range c.problems() {
		if overridden && p.Path == "database_url" {
			p.Path = DatabaseURLVariable
		} else {
			p.Line = lineOf(d.lines, p.Path)
		}
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		return nil, newError(name, problems)
	}
	return c, nil
}

// Validate checks a Config built or changed in code, such as Default with
// its generated keys, and returns every mistake as a *Error.
func (c *Config) Validate() error {
	if problems := c.problems(); len(problems) > 0 {
		return newError("", problems)
	}
	return nil
}

// resolve fills the values that depend on others: metrics_listen "off" is
// "", and a controller's initial limit left out of the file is the root's
// limit on its class, or its minimum.
func (c *Config) resolve(lines map[string]int) {
	if c.MetricsListen == "off" {
		c.MetricsListen = ""
	}
	for class, a := range c.Adaptive {
		if _, ok := lines["adaptive."+class+".initial"]; ok {
			continue
		}
		a.Initial = a.Min
		if limit, ok := c.Root.Limits[class]; ok {
			a.Initial = limit
		}
		c.Adaptive[class] = a
	}
}

// parseDocument parses data as one YAML document and returns its root node,
// or nil for an empty file.
func parseDocument(data []byte) (*yaml.Node, *Problem) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxProblem(err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxProblem(err)
	default:
		return nil, &Problem{Line: next.Line, Message: "only one YAML document is allowed"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// yamlLine matches the line number at the start of a YAML library error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxProblem turns a YAML syntax error into a Problem with its line.
func syntaxProblem(err error) *Problem {
	msg := err.Error()
	p := &Problem{}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	p.Message = "not valid YAML: " + msg
	return p
}

// lineOf returns the line path, or the nearest enclosing field written in
// the file, is on; 0 if none is.
func lineOf(lines map[string]int, path string) int {
	for path != "" {
		if line, ok := lines[path]; ok {
			return line
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return lines[""]
}

// newError names the file in every problem and sorts them by line, those
// without a line last.
func newError(name string, problems []Problem) *Error {
	for i := range problems {
		problems[i].File = name
	}
	slices.SortStableFunc(problems, func(a, b Problem) int {
		switch {
		case a.Line == b.Line:
			return 0
		case a.Line == 0:
			return 1
		case b.Line == 0:
			return -1
		}
		return a.Line - b.Line
	})
	return &Error{Problems: problems}
}

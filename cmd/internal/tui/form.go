package tui

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// capKind says which map a form field edits.
type capKind int

const (
	quota capKind = iota
	limit
	childQuota
	childLimit
)

var kindWords = map[capKind]string{quota: "quota", limit: "limit", childQuota: "child quota", childLimit: "child limit"}

// field is one line of a form: an existing cap to change (empty removes
// it), or, with no name, a new one written NAME=VALUE.
type field struct {
	kind  capKind
	name  string
	orig  string
	input textinput.Model
}

func (f field) label() string {
	if f.name == "" {
		return "new " + kindWords[f.kind] + " (name=value)"
	}
	return kindWords[f.kind] + " " + f.name
}

// change sets (value non-nil) or removes one cap.
type change struct {
	kind  capKind
	name  string
	value *int64
}

// form edits the caps of a node, or the defaults it gives new children.
type form struct {
	title  string
	node   uint64
	fields []field
	focus  int
	err    string
}

func newField(kind capKind, name string, value *int64) field {
	in := textinput.New()
	in.Prompt = ""
	in.CharLimit = 80
	f := field{kind: kind, name: name, input: in}
	if value != nil {
		f.orig = strconv.FormatInt(*value, 10)
		f.input.SetValue(f.orig)
	}
	return f
}

// capsForm edits a node's own quotas and limits.
func capsForm(n *governorv1.NodeInfo) *form {
	f := &form{title: "Caps of " + displayName(n) + " (empty removes a cap)", node: n.GetId()}
	for _, name := range slices.Sorted(maps.Keys(n.GetResources())) {
		if c := n.GetResources()[name].Cap; c != nil {
			f.fields = append(f.fields, newField(quota, name, c))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.GetClasses())) {
		if l := n.GetClasses()[name].Limit; l != nil {
			f.fields = append(f.fields, newField(limit, name, l))
		}
	}
	f.fields = append(f.fields, newField(quota, "", nil), newField(limit, "", nil))
	return f.focused()
}

// defaultsForm edits the defaults a node gives its new children.
func defaultsForm(n *governorv1.NodeInfo) *form {
	f := &form{title: "Defaults new children of " + displayName(n) + " start with (empty removes one)", node: n.GetId()}
	d := n.GetDefaults()
	for _, m := range []struct {
		kind capKind
		caps map[string]int64
	}{{quota, d.GetQuotas()}, {limit, d.GetLimits()}, {childQuota, d.GetChildren().GetQuotas()}, {childLimit, d.GetChildren().GetLimits()}} {
		for _, name := range slices.Sorted(maps.Keys(m.caps)) {
			v := m.caps[name]
			f.fields = append(f.fields, newField(m.kind, name, &v))
		}
	}
	for _, k := range []capKind{quota, limit, childQuota, childLimit} {
		f.fields = append(f.fields, newField(k, "", nil))
	}
	return f.focused()
}

func (f *form) focused() *form {
	for i := range f.fields {
		f.fields[i].input.Blur()
	}
	f.fields[f.focus].input.Focus()
	f.fields[f.focus].input.CursorEnd()
	return f
}

// update moves between fields or edits the focused one.
func (f *form) update(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyTab, tea.KeyDown:
		f.focus = (f.focus + 1) % len(f.fields)
		f.focused()
		return nil
	case tea.KeyShiftTab, tea.KeyUp:
		f.focus = (f.focus + len(f.fields) - 1) % len(f.fields)
		f.focused()
		return nil
	}
	var cmd tea.Cmd
	f.fields[f.focus].input, cmd = f.fields[f.focus].input.Update(msg)
	return cmd
}

// changes reads the fields; an error names the field and what it allows.
func (f *form) changes() ([]change, error) {
	var out []change
	for _, fl := range f.fields {
		text := strings.TrimSpace(fl.input.Value())
		name := fl.name
		if name == "" {
			if text == "" {
				continue
			}
			n, v, ok := strings.Cut(text, "=")
			if !ok || strings.TrimSpace(n) == "" || strings.TrimSpace(v) == "" {
				return nil, fmt.Errorf("%s: write NAME=VALUE, such as tool_calls=500", fl.label())
			}
			name, text = strings.TrimSpace(n), strings.TrimSpace(v)
		} else if text == fl.orig {
			continue
		}
		c := change{kind: fl.kind, name: name}
		if text != "" {
			v, err := strconv.ParseInt(text, 10, 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%s: %q is not a cap; write a whole number of at least 0, or leave it empty to remove the cap", fl.label(), text)
			}
			c.value = &v
		}
		out = append(out, c)
	}
	return out, nil
}

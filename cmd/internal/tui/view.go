package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"governor.dev/governor/cmd/internal/printable"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// level is how close a use is to its cap.
type level int

const (
	calm    level = iota
	warning       // from 80% of the cap
	spent         // at or over the cap
)

// levelOf places used against cap; without a cap nothing is near.
func levelOf(used int64, cap *int64) level {
	switch {
	case cap == nil:
		return calm
	case used >= *cap:
		return spent
	case used*5 >= *cap*4:
		return warning
	}
	return calm
}

var (
	levelStyles = map[level]lipgloss.Style{
		calm:    lipgloss.NewStyle(),
		warning: lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		spent:   lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
	}
	titleStyle    = lipgloss.NewStyle().Bold(true)
	selectedStyle = lipgloss.NewStyle().Reverse(true)
	dimStyle      = lipgloss.NewStyle().Faint(true)
	errorStyle    = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
)

var stateWords = map[governorv1.NodeState]string{
	governorv1.NodeState_NODE_STATE_ACTIVE:            "active",
	governorv1.NodeState_NODE_STATE_DONE:              "done",
	governorv1.NodeState_NODE_STATE_CANCELLED:         "cancelled",
	governorv1.NodeState_NODE_STATE_DEADLINE_EXCEEDED: "past deadline",
}

// displayName is a node's name as drawn: control characters and other runes
// a terminal would act on are escaped.
func displayName(n *governorv1.NodeInfo) string {
	if n.GetDepth() == 0 {
		return "(root)"
	}
	return printable.Name(n.GetName())
}

// usage is a node's use against its caps, each colored by its level.
func usage(n *governorv1.NodeInfo) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(n.GetResources())) {
		r := n.GetResources()[name]
		text := fmt.Sprintf("%s %d", name, r.GetUsed())
		if r.Cap != nil {
			text = fmt.Sprintf("%s %d/%d", name, r.GetUsed(), r.GetCap())
		}
		parts = append(parts, levelStyles[levelOf(r.GetUsed(), r.Cap)].Render(text))
	}
	for _, name := range slices.Sorted(maps.Keys(n.GetClasses())) {
		c := n.GetClasses()[name]
		text := fmt.Sprintf("[%s] %d", name, c.GetHeld())
		if c.Limit != nil {
			text = fmt.Sprintf("[%s] %d/%d", name, c.GetHeld(), c.GetLimit())
		}
		if w := c.GetWaiting(); w > 0 {
			text += fmt.Sprintf(" +%d waiting", w)
		}
		parts = append(parts, levelStyles[levelOf(c.GetHeld(), c.Limit)].Render(text))
	}
	if len(parts) == 0 {
		return dimStyle.Render("nothing used")
	}
	return strings.Join(parts, "  ")
}

func defaultsText(d *governorv1.Defaults) string {
	var parts []string
	for _, m := range []struct {
		label string
		caps  map[string]int64
	}{{"quotas", d.GetQuotas()}, {"limits", d.GetLimits()}, {"children's quotas", d.GetChildren().GetQuotas()}, {"children's limits", d.GetChildren().GetLimits()}} {
		if len(m.caps) == 0 {
			continue
		}
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m.caps)) {
			kv = append(kv, fmt.Sprintf("%s=%d", k, m.caps[k]))
		}
		parts = append(parts, m.label+" "+strings.Join(kv, " "))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

const help = "↑↓ move  enter open  esc back  n/p next/previous page  e edit caps  d defaults  x explain  c cancel  r refresh  q quit"

// View draws the screen.
func (m Model) View() string {
	var b strings.Builder
	names := make([]string, len(m.path))
	for i, f := range m.path {
		names[i] = f.name
	}
	b.WriteString(titleStyle.Render("governor · "+strings.Join(names, " / ")) + "\n")
	if m.node != nil {
		fmt.Fprintf(&b, "%s #%d %s  %s\n", displayName(m.node), m.node.GetId(), stateWords[m.node.GetState()], usage(m.node))
		b.WriteString(dimStyle.Render("defaults for new children: "+defaultsText(m.node.GetDefaults())) + "\n")
	} else {
		b.WriteString("reading…\n\n")
	}
	b.WriteString("\n")
	switch m.mode {
	case editing:
		m.viewForm(&b)
	case explaining:
		m.viewExplain(&b)
	default:
		m.viewChildren(&b)
	}
	b.WriteString("\n")
	switch {
	case m.mode == confirming:
		fmt.Fprintf(&b, "Cancel %s and everything under it? Its later tool calls are refused. y/n\n", displayName(m.selected()))
	case m.err != nil:
		b.WriteString(errorStyle.Render("error: "+m.err.Error()) + "\n")
	case m.status != "":
		b.WriteString(m.status + "\n")
	default:
		b.WriteString("\n")
	}
	b.WriteString(dimStyle.Render(help) + "\n")
	return b.String()
}

func (m Model) viewChildren(b *strings.Builder) {
	if m.node != nil && len(m.children) == 0 {
		b.WriteString(dimStyle.Render("no children") + "\n")
		return
	}
	for i, c := range m.children {
		name := fmt.Sprintf("%-48s", truncate(displayName(c), 48))
		row := fmt.Sprintf("%s %-13s %s", name, stateWords[c.GetState()], usage(c))
		if d := c.GetDeadline(); d != nil && c.GetState() == governorv1.NodeState_NODE_STATE_ACTIVE {
			row += dimStyle.Render("  ends in " + time.Until(d.AsTime()).Round(time.Minute).String())
		}
		if i == m.here().cursor {
			b.WriteString(selectedStyle.Render("›") + " " + row + "\n")
		} else {
			b.WriteString("  " + row + "\n")
		}
	}
	if f := m.here(); m.next != 0 || len(f.back) > 0 {
		b.WriteString(dimStyle.Render(fmt.Sprintf("page %d of the %d children; n next, p previous", len(f.back)+1, m.node.GetChildrenCount())) + "\n")
	}
}

func (m Model) viewForm(b *strings.Builder) {
	f := m.form
	b.WriteString(titleStyle.Render(f.title) + "\n")
	for i, fl := range f.fields {
		marker := "  "
		if i == f.focus {
			marker = "› "
		}
		fmt.Fprintf(b, "%s%-32s %s\n", marker, fl.label(), fl.input.View())
	}
	if f.err != "" {
		b.WriteString(errorStyle.Render(f.err) + "\n")
	}
	b.WriteString(dimStyle.Render("tab/↑↓ move  enter save  esc discard") + "\n")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

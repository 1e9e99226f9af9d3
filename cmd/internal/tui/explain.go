package tui

import (
	"context"
	"strings"

	"connectrpc.com/connect"
	tea "github.com/charmbracelet/bubbletea"

	"governor.dev/governor/cmd/internal/explaintext"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// explained is the answer to the explain key: the lines to show, or why
// there are none.
type explained struct {
	node  uint64
	lines []string
	err   error
}

// explain asks governord about every resource and class node n carries.
func explain(api API, n *governorv1.NodeInfo) tea.Cmd {
	id := n.GetId()
	names := explaintext.Names(n)
	return func() tea.Msg {
		if len(names) == 0 {
			return explained{node: id, lines: []string{"It carries no resource or class: nothing binds."}}
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		var lines []string
		for _, name := range names {
			res, err := api.Explain(ctx, connect.NewRequest(&governorv1.ExplainRequest{NodeId: id, Name: name}))
			if err != nil {
				return explained{node: id, err: err}
			}
			lines = append(lines, explaintext.Lines(res.Msg)...)
		}
		return explained{node: id, lines: lines}
	}
}

func (m *Model) onExplained(x explained) {
	if m.mode != explaining || x.node != m.explainOf {
		return // the panel was closed, or opened on another node, since
	}
	m.err, m.explainLines = x.err, x.lines
}

func (m Model) viewExplain(b *strings.Builder) {
	b.WriteString(titleStyle.Render("why "+nameOf(m.children, m.explainOf)+" waits or is refused") + "\n")
	if m.explainLines == nil && m.err == nil {
		b.WriteString("asking…\n")
	}
	for _, l := range m.explainLines {
		b.WriteString(l + "\n")
	}
	b.WriteString(dimStyle.Render("esc back") + "\n")
}

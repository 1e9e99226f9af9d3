package tui

import (
	"context"
	"time"

	"connectrpc.com/connect"
	tea "github.com/charmbracelet/bubbletea"
	"google.golang.org/protobuf/proto"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Refresh is how often the screen reads the tree again.
const Refresh = time.Second

// mode is what the keys act on.
type mode int

const (
	browsing   mode = iota
	editing         // a caps or defaults form is open
	confirming      // waiting for y or n before a cancel
	explaining      // the selected node's explanation is shown
)

// frame is one level of the path from the starting node, and the page of
// its children shown.
type frame struct {
	id     uint64
	name   string
	cursor int
	after  uint64   // the page shown: children with larger ids
	back   []uint64 // the pages before it, for going back
}

// Options configure a Model.
type Options struct {
	// Start is the node shown first; 0 is the session's scope.
	Start uint64
	// SessionTTL is the screen's session's TTL; the session is renewed
	// every third of it. Zero never renews.
	SessionTTL time.Duration
}

// Model is the screen's state. Create it with New; Bubble Tea drives it.
type Model struct {
	api  API
	opts Options

	path     []frame
	node     *governorv1.NodeInfo
	children []*governorv1.NodeInfo
	next     uint64 // the cursor of the page after this one; 0: none
	loading  bool
	err      error
	status   string
	beatAt   time.Time

	mode      mode
	form      *form
	editsCaps bool // the form edits caps (true) or defaults (false)
	width     int

	explainOf    uint64   // the node the explanation is of
	explainLines []string // its lines, once governord answered
}

var _ tea.Model = Model{}

// New returns the screen over api.
func New(api API, opts Options) Model {
	return Model{api: api, opts: opts, path: []frame{{id: opts.Start}}, beatAt: time.Now()}
}

type tick time.Time

func every() tea.Cmd { return tea.Tick(Refresh, func(t time.Time) tea.Msg { return tick(t) }) }

// Init reads the starting node and starts the refresh.
func (m Model) Init() tea.Cmd { return tea.Batch(m.load(), every()) }

func (m *Model) here() *frame { return &m.path[len(m.path)-1] }

func (m *Model) load() tea.Cmd {
	m.loading = true
	return fetch(m.api, m.here().id, m.here().after)
}

func (m Model) selected() *governorv1.NodeInfo {
	if c := m.here().cursor; c < len(m.children) {
		return m.children[c]
	}
	return nil
}

// Update handles keys, the refresh tick and the answers of governord.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tick:
		return m, m.onTick(time.Time(msg))
	case loaded:
		m.onLoaded(msg)
	case saved:
		return m, m.onSaved(msg)
	case explained:
		m.onExplained(msg)
	case beat:
		if msg.err != nil {
			m.err = msg.err
		}
	case tea.KeyMsg:
		return m.onKey(msg)
	}
	return m, nil
}

func (m *Model) onTick(now time.Time) tea.Cmd {
	cmds := []tea.Cmd{every()}
	if !m.loading {
		cmds = append(cmds, m.load())
	}
	if ttl := m.opts.SessionTTL; ttl > 0 && now.Sub(m.beatAt) >= ttl/3 {
		m.beatAt = now
		cmds = append(cmds, heartbeat(m.api))
	}
	return tea.Batch(cmds...)
}

func (m *Model) onLoaded(l loaded) {
	m.loading = false
	if l.id != m.here().id || l.after != m.here().after {
		return // an answer for a level or a page left since
	}
	m.err = l.err
	if l.err != nil {
		return
	}
	m.node, m.children, m.next = l.node, l.children, l.next
	m.here().name = displayName(l.node)
	if m.here().cursor >= len(m.children) {
		m.here().cursor = max(len(m.children)-1, 0)
	}
}

func (m *Model) onSaved(s saved) tea.Cmd {
	if s.err != nil {
		m.err, m.status = s.err, ""
		return nil
	}
	m.err, m.status = nil, s.what
	return m.load()
}

func (m Model) onKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	if k.Type == tea.KeyCtrlC {
		return m, tea.Quit
	}
	switch m.mode {
	case editing:
		return m.onFormKey(k)
	case confirming:
		return m.onConfirmKey(k)
	case explaining:
		if k.String() == "esc" || k.String() == "backspace" || k.String() == "x" {
			m.mode, m.explainLines, m.err = browsing, nil, nil
		}
		return m, nil
	}
	switch k.String() {
	case "q":
		return m, tea.Quit
	case "up", "k":
		if m.here().cursor > 0 {
			m.here().cursor--
		}
	case "down", "j":
		if m.here().cursor < len(m.children)-1 {
			m.here().cursor++
		}
	case "enter":
		if c := m.selected(); c != nil {
			m.path = append(m.path, frame{id: c.GetId(), name: displayName(c)})
			m.node, m.children, m.status = nil, nil, ""
			return m, m.load()
		}
	case "esc", "backspace":
		if len(m.path) > 1 {
			m.path = m.path[:len(m.path)-1]
			m.node, m.children, m.status = nil, nil, ""
			return m, m.load()
		}
	case "r":
		return m, m.load()
	case "n", "pgdown":
		if m.next != 0 {
			f := m.here()
			f.back, f.after, f.cursor = append(f.back, f.after), m.next, 0
			m.children, m.next, m.status = nil, 0, ""
			return m, m.load()
		}
	case "p", "pgup":
		if f := m.here(); len(f.back) > 0 {
			f.after, f.back, f.cursor = f.back[len(f.back)-1], f.back[:len(f.back)-1], 0
			m.children, m.next, m.status = nil, 0, ""
			return m, m.load()
		}
	case "e":
		if c := m.selected(); c != nil {
			m.mode, m.form, m.editsCaps, m.status = editing, capsForm(c), true, ""
		}
	case "d":
		if m.node != nil {
			m.mode, m.form, m.editsCaps, m.status = editing, defaultsForm(m.node), false, ""
		}
	case "x":
		if c := m.selected(); c != nil {
			m.mode, m.explainOf, m.explainLines, m.err, m.status = explaining, c.GetId(), nil, nil, ""
			return m, explain(m.api, c)
		}
	case "c":
		switch c := m.selected(); {
		case c == nil:
		case c.GetState() != governorv1.NodeState_NODE_STATE_ACTIVE:
			m.status = displayName(c) + " has already ended"
		default:
			m.mode, m.status = confirming, ""
		}
	}
	return m, nil
}

func (m Model) onFormKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.Type {
	case tea.KeyEsc:
		m.mode, m.form = browsing, nil
		return m, nil
	case tea.KeyEnter:
		changes, err := m.form.changes()
		if err != nil {
			m.form.err = err.Error()
			return m, nil
		}
		f := m.form
		m.mode, m.form = browsing, nil
		if len(changes) == 0 {
			m.status = "nothing changed"
			return m, nil
		}
		if m.editsCaps {
			return m, apply("caps of "+nameOf(m.children, f.node)+" saved", capCalls(m.api, f.node, changes))
		}
		return m, apply("defaults saved", []func(context.Context) error{defaultsCall(m.api, m.node, changes)})
	}
	return m, m.form.update(k)
}

func (m Model) onConfirmKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.mode = browsing
	c := m.selected()
	if k.String() != "y" || c == nil {
		m.status = "not cancelled"
		return m, nil
	}
	id, name := c.GetId(), displayName(c)
	return m, apply(name+" cancelled", []func(context.Context) error{func(ctx context.Context) error {
		_, err := m.api.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: id, Reason: "cancelled in governor ui"}))
		return err
	}})
}

// capCalls sets or removes each changed cap of a node.
func capCalls(api API, node uint64, changes []change) []func(context.Context) error {
	var calls []func(context.Context) error
	for _, c := range changes {
		if c.kind == quota {
			calls = append(calls, func(ctx context.Context) error {
				_, err := api.SetQuota(ctx, connect.NewRequest(&governorv1.SetQuotaRequest{NodeId: node, Resource: c.name, Value: c.value}))
				return err
			})
			continue
		}
		calls = append(calls, func(ctx context.Context) error {
			_, err := api.SetLimit(ctx, connect.NewRequest(&governorv1.SetLimitRequest{NodeId: node, Class: c.name, Value: c.value}))
			return err
		})
	}
	return calls
}

// defaultsCall replaces a node's defaults with its current ones changed.
func defaultsCall(api API, n *governorv1.NodeInfo, changes []change) func(context.Context) error {
	d := &governorv1.Defaults{}
	if n.GetDefaults() != nil {
		d = proto.Clone(n.GetDefaults()).(*governorv1.Defaults)
	}
	if d.Children == nil {
		d.Children = &governorv1.ChildDefaults{}
	}
	for _, c := range changes {
		m := map[capKind]*map[string]int64{quota: &d.Quotas, limit: &d.Limits, childQuota: &d.Children.Quotas, childLimit: &d.Children.Limits}[c.kind]
		if c.value == nil {
			delete(*m, c.name)
			continue
		}
		if *m == nil {
			*m = map[string]int64{}
		}
		(*m)[c.name] = *c.value
	}
	id := n.GetId()
	return func(ctx context.Context) error {
		_, err := api.SetDefaults(ctx, connect.NewRequest(&governorv1.SetDefaultsRequest{NodeId: id, Defaults: d}))
		return err
	}
}

func nameOf(nodes []*governorv1.NodeInfo, id uint64) string {
	for _, n := range nodes {
		if n.GetId() == id {
			return displayName(n)
		}
	}
	return "the node"
}

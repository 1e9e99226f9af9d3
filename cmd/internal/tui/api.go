package tui

import (
	"context"
	"time"

	"connectrpc.com/connect"
	tea "github.com/charmbracelet/bubbletea"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// API is the part of governord's service the screen calls, with a session
// token.
type API interface {
	GetNode(context.Context, *connect.Request[governorv1.GetNodeRequest]) (*connect.Response[governorv1.GetNodeResponse], error)
	SetQuota(context.Context, *connect.Request[governorv1.SetQuotaRequest]) (*connect.Response[governorv1.SetQuotaResponse], error)
	SetLimit(context.Context, *connect.Request[governorv1.SetLimitRequest]) (*connect.Response[governorv1.SetLimitResponse], error)
	SetDefaults(context.Context, *connect.Request[governorv1.SetDefaultsRequest]) (*connect.Response[governorv1.SetDefaultsResponse], error)
	CancelNode(context.Context, *connect.Request[governorv1.CancelNodeRequest]) (*connect.Response[governorv1.CancelNodeResponse], error)
	Heartbeat(context.Context, *connect.Request[governorv1.HeartbeatRequest]) (*connect.Response[governorv1.HeartbeatResponse], error)
	Explain(context.Context, *connect.Request[governorv1.ExplainRequest]) (*connect.Response[governorv1.ExplainResponse], error)
}

var _ API = governorv1connect.GovernorServiceClient(nil)

// callTimeout bounds each call the screen makes.
const callTimeout = 5 * time.Second

// pageSize is how many children the screen reads and shows at a time.
const pageSize = 200

// loaded is a node and one page of its children as read at one instant.
type loaded struct {
	id       uint64 // the node asked for
	after    uint64 // the page asked for: children with larger ids
	node     *governorv1.NodeInfo
	children []*governorv1.NodeInfo
	next     uint64 // the next page's cursor; 0 when this page is the last
	err      error
}

// saved reports an edit: nil error when governord applied it.
type saved struct {
	what string
	err  error
}

// beat reports a heartbeat of the screen's session.
type beat struct{ err error }

func fetch(api API, id, after uint64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		req := &governorv1.GetNodeRequest{NodeId: id, IncludeChildren: true, PageSize: pageSize, Cursor: after}
		res, err := api.GetNode(ctx, connect.NewRequest(req))
		if err != nil {
			return loaded{id: id, after: after, err: err}
		}
		return loaded{id: id, after: after, node: res.Msg.GetNode(), children: res.Msg.GetChildren(), next: res.Msg.GetNextCursor()}
	}
}

func heartbeat(api API) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		_, err := api.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))
		return beat{err: err}
	}
}

// apply runs the calls of one edit in order, stopping at the first error.
func apply(what string, calls []func(context.Context) error) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		for _, c := range calls {
			if err := c(ctx); err != nil {
				return saved{what: what, err: err}
			}
		}
		return saved{what: what}
	}
}

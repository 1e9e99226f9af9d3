package cli

import (
	"context"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// resolve turns a NODE argument into a node id: a number is an id, "." or
// "" is the caller's scope (0), and anything else is a path of child names
// from the scope, separated by "/". Among children of one name the active
// one, else the newest, is taken.
func resolve(ctx context.Context, api governorv1connect.GovernorServiceClient, arg string) (uint64, error) {
	if arg == "" || arg == "." {
		return 0, nil
	}
	if id, err := strconv.ParseUint(arg, 10, 63); err == nil {
		return id, nil
	}
	var id uint64
	for _, name := range strings.Split(strings.Trim(arg, "/"), "/") {
		node, child, err := findChild(ctx, api, id, name)
		if err != nil {
			return 0, err
		}
		if child == nil {
			return 0, usagef("node %q has no child named %q (NODE is an id, \".\" for your scope, or a path of names such as team-a/claude:SESSION)", node.GetName(), name)
		}
		id = child.GetId()
	}
	return id, nil
}

// findChild reads every page of a node's children and picks the one called
// name; it returns the node too.
func findChild(ctx context.Context, api governorv1connect.GovernorServiceClient, id uint64, name string) (*governorv1.NodeInfo, *governorv1.NodeInfo, error) {
	var best *governorv1.NodeInfo
	req := &governorv1.GetNodeRequest{NodeId: id, IncludeChildren: true, PageSize: maxPageSize}
	for {
		res, err := api.GetNode(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, nil, err
		}
		best = pick(best, res.Msg.GetChildren(), name)
		if req.Cursor = res.Msg.GetNextCursor(); req.Cursor == 0 {
			return res.Msg.GetNode(), best, nil
		}
	}
}

// maxPageSize is the largest page of children governord hands out.
const maxPageSize = 5000

// pick returns, of best and the children called name, the active one, else
// the newest.
func pick(best *governorv1.NodeInfo, children []*governorv1.NodeInfo, name string) *governorv1.NodeInfo {
	for _, c := range children {
		if c.GetName() != name {
			continue
		}
		if best == nil || active(c) && !active(best) || active(c) == active(best) && c.GetId() > best.GetId() {
			best = c
		}
	}
	return best
}

func active(n *governorv1.NodeInfo) bool {
	return n.GetState() == governorv1.NodeState_NODE_STATE_ACTIVE
}

// withNode runs f with a session, as withSession does, and the id of the
// node arg names (see resolve).
func withNode(cmd *cobra.Command, conn *connFlags, arg string, f func(context.Context, governorv1connect.GovernorServiceClient, uint64) error) error {
	return withSession(cmd, conn, func(ctx context.Context, api governorv1connect.GovernorServiceClient) error {
		id, err := resolve(ctx, api, arg)
		if err != nil {
			return err
		}
		return f(ctx, api, id)
	})
}

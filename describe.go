package governor

import (
	"context"
	"strings"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Node is a node of governord's tree as Describe reads it: where a task
// (or its tenant, or an ancestor) stands.
type Node struct {
	ID       uint64
	ParentID uint64 // 0 for the root
	Name     string
	Tenant   string // empty for the root
	// State is "active", "done", "cancelled" or "deadline_exceeded".
	State string
	// EndedReason says why the node ended; empty while it is active.
	EndedReason string
	// Deadline is the earliest deadline on the node's chain; zero: none.
	Deadline time.Time
	// Resources maps each resource with a cap or a use on the node to its
	// cap and its subtree's use.
	Resources map[string]ResourceUsage
	// Classes maps each concurrency class with a limit or a held lease on
	// the node to its limit and its subtree's leases.
	Classes map[string]ClassUsage
	// Children counts the node's children governord holds: the active
	// ones and those ended within the retention period.
	Children uint64
}

// ResourceUsage is a node's cap on a resource and its subtree's use.
type ResourceUsage struct {
	Cap    int64 // meaningful when Capped
	Capped bool  // false: the node does not cap the resource
	Used   int64
}

// ClassUsage is a node's limit on a concurrency class, the leases its
// subtree holds and the acquires queued for it.
type ClassUsage struct {
	Limit   int64 // meaningful when Limited
	Limited bool  // false: the node does not limit the class
	Held    int64
	Waiting int64 // acquires queued on the node and beneath it
}

// Describe reads node id as governord holds it now (caps, use, leases
// held and acquires waiting); 0 is the key's scope
// (its tenant). A node outside the key's scope is ErrForbidden, one that
// does not exist ErrNotFound.
func (c *Client) Describe(ctx context.Context, id uint64) (Node, error) {
	s, err := c.liveSession(ctx)
	if err != nil {
		return Node{}, err
	}
	res, err := s.api.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: id}))
	if err != nil {
		return Node{}, s.called(ctx, "describe", err)
	}
	return node(res.Msg.Node), nil
}

// node reads a NodeInfo.
func node(m *governorv1.NodeInfo) Node {
	n := Node{
		ID: m.Id, ParentID: m.ParentId, Name: m.Name, Tenant: m.Tenant, EndedReason: m.EndedReason,
		State:     strings.ToLower(strings.TrimPrefix(m.State.String(), "NODE_STATE_")),
		Resources: make(map[string]ResourceUsage, len(m.Resources)),
		Classes:   make(map[string]ClassUsage, len(m.Classes)),
		Children:  m.ChildrenCount, Deadline: when(m.Deadline),
	}
	for name, r := range m.Resources {
		n.Resources[name] = ResourceUsage{Cap: r.GetCap(), Capped: r.Cap != nil, Used: r.Used}
	}
	for name, cu := range m.Classes {
		n.Classes[name] = ClassUsage{Limit: cu.GetLimit(), Limited: cu.Limit != nil, Held: cu.Held, Waiting: cu.Waiting}
	}
	return n
}

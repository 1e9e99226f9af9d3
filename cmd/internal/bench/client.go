package bench

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// sessionTTL is the TTL of the scenarios' sessions, which send no
// heartbeats: longer than any scenario runs.
const sessionTTL = 10 * time.Minute

// session is a session opened with the admin key: its scope is the root, so
// it may make tenants, set the root's caps and act anywhere. Safe for
// concurrent use.
type session struct {
	api   governorv1connect.GovernorServiceClient
	id    uint64
	token string
}

// session opens a session with the given TTL; opts shape its client.
func (t *target) session(ctx context.Context, ttl time.Duration, opts ...connect.ClientOption) (*session, error) {
	conn := t.conn
	conn.APIKey = t.adminKey
	key, err := conn.API(nil)
	if err != nil {
		return nil, err
	}
	resp, err := key.OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{
		Ttl: durationpb.New(ttl), ClientName: "govbench",
	}))
	if err != nil {
		return nil, fmt.Errorf("open a session: %w", err)
	}
	s := &session{id: resp.Msg.SessionId, token: resp.Msg.Token}
	if s.api, err = t.conn.API(func() string { return s.token }, opts...); err != nil {
		return nil, err
	}
	return s, nil
}

// dial connects the SDK to t with the admin key: its tasks are made under
// the root.
func (t *target) dial(ctx context.Context) (*governor.Client, error) {
	return governor.Dial(ctx, governor.WithAddr(t.conn.Addr), governor.WithAPIKey(t.adminKey),
		governor.WithHTTPClient(t.conn.HTTPClient), governor.WithClientName("govbench"))
}

// node creates a child of parent (1 is the root) and returns its id.
func (s *session) node(ctx context.Context, parent uint64, spec *governorv1.NodeSpec) (uint64, error) {
	resp, err := s.api.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{ParentId: parent, Spec: spec}))
	if err != nil {
		return 0, fmt.Errorf("create node %q: %w", spec.Name, err)
	}
	return resp.Msg.Node.Id, nil
}

// describe returns node as governord holds it.
func (s *session) describe(ctx context.Context, node uint64) (*governorv1.NodeInfo, error) {
	resp, err := s.api.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: node}))
	if err != nil {
		return nil, fmt.Errorf("describe node %d: %w", node, err)
	}
	return resp.Msg.Node, nil
}

// setLimit sets node's limit on class; nil removes it.
func (s *session) setLimit(ctx context.Context, node uint64, class string, v *int64) error {
	_, err := s.api.SetLimit(ctx, connect.NewRequest(&governorv1.SetLimitRequest{NodeId: node, Class: class, Value: v}))
	if err != nil {
		return fmt.Errorf("set the limit on %q: %w", class, err)
	}
	return nil
}

// cancel ends node and its subtree.
func (s *session) cancel(ctx context.Context, node uint64) error {
	_, err := s.api.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: node, Reason: "govbench finished"}))
	if err != nil {
		return fmt.Errorf("cancel node %d: %w", node, err)
	}
	return nil
}

// consume spends n of resource on node; a refusal is an error with
// connect.CodeResourceExhausted.
func (s *session) consume(ctx context.Context, node uint64, resource string, n int64, requestID string) error {
	_, err := s.api.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: node, Resource: resource, Amount: n, RequestId: requestID}))
	return err
}

// acquire waits for one slot of class on node and returns the lease id.
func (s *session) acquire(ctx context.Context, node uint64, class string) (uint64, error) {
	resp, err := s.api.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: node, Class: class}))
	if err != nil {
		return 0, err
	}
	return resp.Msg.Lease.Id, nil
}

// release returns a lease with its report for the adaptive controller.
func (s *session) release(ctx context.Context, lease uint64, latency time.Duration, overloaded bool) error {
	req := &governorv1.ReleaseRequest{LeaseId: lease, Overloaded: overloaded}
	if latency > 0 {
		req.Latency = durationpb.New(latency)
	}
	_, err := s.api.Release(ctx, connect.NewRequest(req))
	return err
}

// close ends the session and every lease it holds.
func (s *session) close(ctx context.Context) error {
	_, err := s.api.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))
	return err
}

// refused reports whether err is governord's refusal for lack of budget.
func refused(err error) bool { return connect.CodeOf(err) == connect.CodeResourceExhausted }

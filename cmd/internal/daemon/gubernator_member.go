package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/cluster"
	"governor.dev/governor/cmd/internal/gubernator"
	"governor.dev/governor/cmd/internal/server"
	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
)

// Messages of the Gubernator API on a cluster member.
const (
	msgNotSeeded     = "This governord leads its cluster but has not set up the configuration's tenants yet; nothing was applied. Retry shortly."
	msgLeaderChanged = "The cluster's leader changed during the call: some of its requests may have been applied. Check before sending them again."
)

// memberLimiter is the Gubernator API's limiter on a cluster member. Only
// the leader calls it (a follower forwards: leaderForward); it charges
// through the log, under the tenant node its seeding of the configuration
// found.
type memberLimiter struct {
	m        *member
	tenant   string
	resource string
}

var _ gubernator.Limiter = (*memberLimiter)(nil)

func (l *memberLimiter) Limit(c gubernator.Check) (gubernator.Verdict, uint64, error) {
	id, ok := l.m.tenant(l.tenant)
	if !ok {
		return gubernator.Verdict{}, 0, connect.NewError(connect.CodeUnavailable, errors.New(msgNotSeeded))
	}
	v, seq, err := gubernator.NewLimiter(l.m.node, id, l.resource).Limit(c)
	var nl *cluster.ErrNotLeader
	if errors.As(err, &nl) || errors.Is(err, cluster.ErrUnknownOutcome) || errors.Is(err, raft.ErrEnqueueTimeout) {
		return v, seq, connect.NewError(connect.CodeUnavailable, errors.New(msgLeaderChanged))
	}
	return v, seq, err
}

// How a follower waits for a leader to forward to: its first pause, the
// longest, and for how long in all when the caller set no deadline.
const (
	forwardFirstWait = 20 * time.Millisecond
	forwardMaxWait   = 500 * time.Millisecond
	forwardPatience  = 5 * time.Second
)

// leaderForward passes a follower's GetRateLimits calls to the leader's
// API (Gubernator clients do not follow a leader hint), with the caller's
// key, over TLS when the API uses it (the leader's certificate checked
// against the members' CA). It sends again only what was certainly not
// applied: a call the leader could not be reached with, or that a member
// refused as not leading; any other failure is the caller's answer. Safe
// for concurrent use.
type leaderForward struct {
	m      *member
	http   *http.Client
	scheme string

	mu      sync.Mutex                              // guards clients
	clients map[string]gubernatorv1connect.V1Client // by the leader's API address
}

var _ gubernator.Forwarder = (*leaderForward)(nil)

func newLeaderForward(m *member, tlsConfig *tls.Config) *leaderForward {
	f := &leaderForward{m: m, scheme: "http", clients: make(map[string]gubernatorv1connect.V1Client)}
	tr := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: idleTimeout}
	if tlsConfig != nil {
		f.scheme, tr.TLSClientConfig, tr.ForceAttemptHTTP2 = "https", tlsConfig, true
	}
	f.http = &http.Client{Transport: tr}
	return f
}

// Forward answers false on the leader. A follower passes the call on,
// refusing instead a call another member already passed to it.
func (f *leaderForward) Forward(ctx context.Context, auth string, forwarded bool, req *gubernatorv1.GetRateLimitsReq) (*gubernatorv1.GetRateLimitsResp, bool, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, forwardPatience)
		defer cancel()
	}
	for wait := forwardFirstWait; ; wait = min(2*wait, forwardMaxWait) {
		leader, self := f.leader()
		switch {
		case self:
			return nil, false, nil
		case forwarded:
			return nil, true, refuseForwarded(leader)
		case leader != "":
			res, err := f.client(leader).GetRateLimits(ctx, forwardedRequest(req, auth))
			if err == nil {
				return res.Msg, true, nil
			}
			if !notApplied(err) || ctx.Err() != nil {
				return nil, true, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, true, server.NotLeader(leader)
		case <-time.After(wait):
		}
	}
}

// leader is the leader's API address, "" if none is known, and whether
// this member leads.
func (f *leaderForward) leader() (string, bool) {
	r := f.m.node.Raft()
	if r.State() == raft.Leader {
		return "", true
	}
	_, id := r.LeaderWithID()
	return f.m.api[id], false
}

func (f *leaderForward) client(addr string) gubernatorv1connect.V1Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.clients[addr]
	if !ok {
		c = gubernatorv1connect.NewV1Client(f.http, f.scheme+"://"+addr)
		f.clients[addr] = c
	}
	return c
}

func forwardedRequest(m *gubernatorv1.GetRateLimitsReq, auth string) *connect.Request[gubernatorv1.GetRateLimitsReq] {
	req := connect.NewRequest(m)
	req.Header().Set("Authorization", auth)
	req.Header().Set(gubernator.ForwardedHeader, "1")
	return req
}

// refuseForwarded is a member's answer to a call another member passed to
// it while it does not lead: nothing was applied, which the metadata
// ForwardedHeader: refused says to the member that sent it.
func refuseForwarded(leader string) error {
	err := server.NotLeader(leader)
	err.Meta().Set(gubernator.ForwardedHeader, "refused")
	return err
}

// notApplied reports whether a forwarded call certainly applied nothing:
// the leader refused it as not leading, or it could not be reached.
func notApplied(err error) bool {
	var ce *connect.Error
	if errors.As(err, &ce) && ce.Meta().Get(gubernator.ForwardedHeader) == "refused" {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

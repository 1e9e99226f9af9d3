package clientconn

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// LeaderHeader is the response metadata (a header or a trailer) by which
// a governord that is not its cluster's leader names the leader's API
// address, host:port, when it answers a call with Unavailable. It is
// absent while that node knows no leader.
const LeaderHeader = "Governor-Leader"

// NotAppliedHeader is the response metadata, set to "true", by which a
// governord says that a call it answered with Unavailable was not applied:
// it refused it before the call entered its cluster's log. A client may
// send such a call again to any node, with or without a request id.
const NotAppliedHeader = "Governor-Not-Applied"

// router says where the calls of a configuration with several addresses
// go: the node believed to be the leader. It starts at the first address,
// moves to the address a node names as the leader, and, when the node it
// holds fails, moves on through the list: past that node when it is
// listed, past the last listed node it held otherwise (a leader a node
// named need not be listed). It is safe for concurrent use.
type router struct {
	addrs []string // host:port of every address, in the order given

	mu  sync.Mutex // guards the fields below
	cur string     // host:port the next call goes to
	at  int        // the index in addrs of the last listed address cur held
}

// newRouter routes among the addresses of urls, as URLs returns them.
func newRouter(urls []string) *router {
	r := &router{addrs: make([]string, len(urls))}
	for i, u := range urls {
		_, r.addrs[i], _ = strings.Cut(u, "://")
	}
	r.cur = r.addrs[0]
	return r
}

// target is where the next call goes.
func (r *router) target() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// follow sends the next calls to leader, which a node named.
func (r *router) follow(leader string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur = leader
}

// failed moves past addr, which did not answer. Nothing moves when the
// calls already go elsewhere: failures of concurrent calls at one address
// move past it once.
func (r *router) failed(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != addr {
		return
	}
	if i := slices.Index(r.addrs, addr); i >= 0 {
		r.at = i
	}
	r.at = (r.at + 1) % len(r.addrs)
	r.cur = r.addrs[r.at]
}

// targetKey marks the context of one attempt of a call with the address
// it goes to.
type targetKey struct{}

// routed sends every request to the address its attempt chose, or to the
// router's target.
type routed struct {
	base http.RoundTripper
	r    *router
}

var _ http.RoundTripper = (*routed)(nil)

func (t *routed) RoundTrip(req *http.Request) (*http.Response, error) {
	addr, ok := req.Context().Value(targetKey{}).(string)
	if !ok {
		addr = t.r.target()
	}
	out := req.Clone(req.Context())
	out.URL.Host, out.Host = addr, addr
	return t.base.RoundTrip(out)
}

// CloseIdleConnections closes the idle connections of the base transport.
func (t *routed) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// withTarget marks ctx as the context of an attempt that goes to addr.
func withTarget(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, targetKey{}, addr)
}

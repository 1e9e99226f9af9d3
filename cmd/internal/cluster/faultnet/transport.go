package faultnet

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Transport is one node's end of the network. It implements raft.Transport,
// raft.WithPreVote and raft.WithClose. Safe for concurrent use.
type Transport struct {
	net      *Net
	addr     raft.ServerAddress
	consumer chan raft.RPC
	closed   chan struct{}
	close    sync.Once

	mu        sync.Mutex // guards heartbeat
	heartbeat func(raft.RPC)
}

var (
	_ raft.Transport   = (*Transport)(nil)
	_ raft.WithPreVote = (*Transport)(nil)
	_ raft.WithClose   = (*Transport)(nil)
)

func newTransport(n *Net, addr raft.ServerAddress) *Transport {
	return &Transport{
		net:      n,
		addr:     addr,
		consumer: make(chan raft.RPC, 16),
		closed:   make(chan struct{}),
	}
}

// Consumer returns the channel of requests that reach this node.
func (t *Transport) Consumer() <-chan raft.RPC { return t.consumer }

// LocalAddr returns this node's address.
func (t *Transport) LocalAddr() raft.ServerAddress { return t.addr }

// SetHeartbeatHandler makes heartbeats skip the consumer channel and go to cb,
// as raft's TCP transport does.
func (t *Transport) SetHeartbeatHandler(cb func(raft.RPC)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.heartbeat = cb
}

// EncodePeer encodes an address as its bytes.
func (t *Transport) EncodePeer(_ raft.ServerID, addr raft.ServerAddress) []byte {
	return []byte(addr)
}

// DecodePeer decodes what EncodePeer made.
func (t *Transport) DecodePeer(buf []byte) raft.ServerAddress { return raft.ServerAddress(buf) }

// Close stops the transport: calls to and from it fail from now on. It may be
// called more than once.
func (t *Transport) Close() error {
	t.close.Do(func() { close(t.closed) })
	return nil
}

// AppendEntries sends one AppendEntries request, a heartbeat when it carries
// nothing.
func (t *Transport) AppendEntries(_ raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return exchange(t, target, args, nil, t.net.timeout, resp)
}

// RequestVote asks target for its vote.
func (t *Transport) RequestVote(_ raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return exchange(t, target, args, nil, t.net.timeout, resp)
}

// RequestPreVote asks target whether it would vote.
func (t *Transport) RequestPreVote(_ raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return exchange(t, target, args, nil, t.net.timeout, resp)
}

// InstallSnapshot sends a snapshot, read from data by the receiver. It waits
// ten times the network's timeout, as raft's in-memory transport does.
func (t *Transport) InstallSnapshot(_ raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	return exchange(t, target, args, data, 10*t.net.timeout, resp)
}

// TimeoutNow tells target to start an election at once.
func (t *Transport) TimeoutNow(_ raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return exchange(t, target, args, nil, t.net.timeout, resp)
}

// exchange carries one request and its reply, and copies the reply into resp.
func exchange[R any](t *Transport, target raft.ServerAddress, args any, data io.Reader, timeout time.Duration, resp *R) error {
	p, err := t.send(target, args, data, timeout)
	if err != nil {
		return err
	}
	out, err := t.await(p, timeout)
	if err != nil {
		return err
	}
	r, ok := out.(*R)
	if !ok {
		return fmt.Errorf("faultnet: %q answered %T with %T", target, args, out)
	}
	*resp = *r
	return nil
}

// pending is a request that reached its peer and whose reply is awaited.
type pending struct {
	peer  *Transport
	reply chan raft.RPCResponse
}

// send carries a request to target, through the faults of its route.
func (t *Transport) send(target raft.ServerAddress, args any, data io.Reader, timeout time.Duration) (pending, error) {
	peer, err := t.net.peer(target)
	if err != nil {
		return pending{}, err
	}
	d, arrives := t.net.leg(t.addr, target)
	if err := t.travel(d, peer); err != nil {
		return pending{}, err
	}
	if !arrives || t.net.isCut(t.addr, target) {
		return pending{}, fmt.Errorf("request %T from %q to %q: %w", args, t.addr, target, ErrDropped)
	}
	reply := make(chan raft.RPCResponse, 1)
	rpc := raft.RPC{Command: args, Reader: data, RespChan: reply}
	if err := peer.receive(rpc, timeout); err != nil {
		return pending{}, err
	}
	return pending{peer: peer, reply: reply}, nil
}

// await waits for the reply of p, then carries it back through the faults of
// the route home.
func (t *Transport) await(p pending, timeout time.Duration) (any, error) {
	var r raft.RPCResponse
	select {
	case r = <-p.reply:
	case <-time.After(timeout):
		return nil, fmt.Errorf("reply from %q: %w", p.peer.addr, ErrTimeout)
	case <-p.peer.closed:
		return nil, fmt.Errorf("reply from %q: %w", p.peer.addr, ErrClosed)
	case <-t.closed:
		return nil, fmt.Errorf("reply to %q: %w", t.addr, ErrClosed)
	}
	d, arrives := t.net.leg(p.peer.addr, t.addr)
	if err := t.travel(d, p.peer); err != nil {
		return nil, err
	}
	if !arrives || t.net.isCut(p.peer.addr, t.addr) {
		return nil, fmt.Errorf("reply from %q to %q: %w", p.peer.addr, t.addr, ErrDropped)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Response, nil
}

// travel waits d, the time a message between t and peer is on its way, and
// fails when either end closes meanwhile.
func (t *Transport) travel(d time.Duration, peer *Transport) error {
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-t.closed:
		case <-peer.closed:
		}
	}
	select {
	case <-t.closed:
		return fmt.Errorf("call from %q: %w", t.addr, ErrClosed)
	case <-peer.closed:
		return fmt.Errorf("call to %q: %w", peer.addr, ErrClosed)
	default:
		return nil
	}
}

// receive hands a request that arrived to raft: heartbeats to the heartbeat
// handler when one is set, everything else to the consumer channel.
func (t *Transport) receive(rpc raft.RPC, timeout time.Duration) error {
	if req, ok := rpc.Command.(*raft.AppendEntriesRequest); ok && isHeartbeat(req) {
		t.mu.Lock()
		fn := t.heartbeat
		t.mu.Unlock()
		if fn != nil {
			fn(rpc)
			return nil
		}
	}
	select {
	case t.consumer <- rpc:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("request to %q: %w", t.addr, ErrTimeout)
	case <-t.closed:
		return fmt.Errorf("request to %q: %w", t.addr, ErrClosed)
	}
}

// isHeartbeat tells a heartbeat by the same fields raft's TCP transport
// looks at.
func isHeartbeat(req *raft.AppendEntriesRequest) bool {
	leader := req.Addr
	if len(leader) == 0 {
		leader = req.Leader
	}
	return req.Term != 0 && leader != nil && req.PrevLogEntry == 0 && req.PrevLogTerm == 0 &&
		len(req.Entries) == 0 && req.LeaderCommitIndex == 0
}

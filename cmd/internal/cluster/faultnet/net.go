package faultnet

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Net is the network: it makes one Transport per address and decides, for
// every leg of every exchange, whether it arrives and how late. The zero value
// is not usable; call New. Safe for concurrent use.
type Net struct {
	timeout time.Duration

	mu    sync.Mutex // guards the fields below
	rng   *rand.Rand
	nodes map[raft.ServerAddress]*Transport
	links map[route]link // faults of one direction; absent means healthy
	all   link           // faults of every direction, on top of links
}

// route is one direction between two addresses.
type route struct{ from, to raft.ServerAddress }

// link is what happens to the messages of a route.
type link struct {
	cut    bool          // every message is dropped
	loss   float64       // the fraction of messages dropped, in [0, 1]
	delay  time.Duration // every message waits this long
	jitter time.Duration // and up to this much more, drawn per message
}

// New returns an empty network whose random choices (loss, jitter) come from
// seed, and whose calls give up on a peer that does not take or answer a
// request within timeout.
func New(seed uint64, timeout time.Duration) *Net {
	return &Net{
		timeout: timeout,
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		nodes:   make(map[raft.ServerAddress]*Transport),
		links:   make(map[route]link),
	}
}

// Transport returns a new transport at addr, reachable by every other
// transport of the network. It fails when addr is already taken.
func (n *Net) Transport(addr raft.ServerAddress) (*Transport, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.nodes[addr]; ok {
		return nil, fmt.Errorf("faultnet: address %q already has a transport; each node needs its own address", addr)
	}
	t := newTransport(n, addr)
	n.nodes[addr] = t
	return t, nil
}

// peer returns the transport at addr.
func (n *Net) peer(addr raft.ServerAddress) (*Transport, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t, ok := n.nodes[addr]
	if !ok {
		return nil, fmt.Errorf("call %q: %w", addr, ErrUnknownPeer)
	}
	return t, nil
}

// leg decides the fate of one message from one address to another: how long
// it travels, and whether it arrives at all.
func (n *Net) leg(from, to raft.ServerAddress) (time.Duration, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.links[route{from, to}]
	if l.cut || n.all.cut {
		return l.delay + n.all.delay, false
	}
	d := l.delay + n.all.delay + n.jitterLocked(l.jitter) + n.jitterLocked(n.all.jitter)
	lost := n.lostLocked(l.loss) || n.lostLocked(n.all.loss)
	return d, !lost
}

// isCut tells whether the route from one address to another is cut now. A
// message is checked when it leaves and again when it arrives, so that a cut
// also drops the messages on their way, as a pulled cable does.
func (n *Net) isCut(from, to raft.ServerAddress) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.all.cut || n.links[route{from, to}].cut
}

// jitterLocked draws a delay in [0, max].
func (n *Net) jitterLocked(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return time.Duration(n.rng.Int64N(int64(max) + 1))
}

// lostLocked draws whether a message is lost at the given rate.
func (n *Net) lostLocked(rate float64) bool {
	return rate > 0 && n.rng.Float64() < rate
}

package faultnet

import (
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Isolate cuts addr off from every other node, both ways, until Heal or a
// Partition that places it with others. Like every cut, it also drops the
// messages on their way.
func (n *Net) Isolate(addr raft.ServerAddress) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.knownLocked(addr); err != nil {
		return err
	}
	for other := range n.nodes {
		if other != addr {
			n.updateLocked(route{addr, other}, func(l *link) { l.cut = true })
			n.updateLocked(route{other, addr}, func(l *link) { l.cut = true })
		}
	}
	return nil
}

// Partition splits the network into groups: nodes of one group talk to each
// other, and every message between groups is dropped, both ways. It replaces
// every cut made before (by Isolate, Cut or an earlier Partition) and keeps
// delays and loss. Every node must be in exactly one group.
func (n *Net) Partition(groups ...[]raft.ServerAddress) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	group := make(map[raft.ServerAddress]int, len(n.nodes))
	for g, members := range groups {
		for _, addr := range members {
			if err := n.knownLocked(addr); err != nil {
				return err
			}
			if _, dup := group[addr]; dup {
				return fmt.Errorf("faultnet: partition names %q twice; each node belongs to exactly one group", addr)
			}
			group[addr] = g
		}
	}
	if len(group) != len(n.nodes) {
		return fmt.Errorf("faultnet: partition places %d of %d nodes; every node must be in a group", len(group), len(n.nodes))
	}
	for from := range n.nodes {
		for to := range n.nodes {
			if from != to {
				cut := group[from] != group[to]
				n.updateLocked(route{from, to}, func(l *link) { l.cut = cut })
			}
		}
	}
	return nil
}

// Cut drops every message from one node to another, and none the other way:
// requests from `from` are lost, and so are the replies `from` owes to `to`.
func (n *Net) Cut(from, to raft.ServerAddress) error {
	return n.update(from, to, func(l *link) { l.cut = true })
}

// Delay makes every message from one node to another wait delay plus a random
// duration up to jitter, drawn per message. It replaces the route's earlier
// delay.
func (n *Net) Delay(from, to raft.ServerAddress, delay, jitter time.Duration) error {
	if err := checkDelay(delay, jitter); err != nil {
		return err
	}
	return n.update(from, to, func(l *link) { l.delay, l.jitter = delay, jitter })
}

// DelayAll makes every message wait delay plus a random duration up to
// jitter, on top of the delay of its route.
func (n *Net) DelayAll(delay, jitter time.Duration) error {
	if err := checkDelay(delay, jitter); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all.delay, n.all.jitter = delay, jitter
	return nil
}

// Lose drops the given fraction of the messages from one node to another,
// drawn per message.
func (n *Net) Lose(from, to raft.ServerAddress, rate float64) error {
	if err := checkRate(rate); err != nil {
		return err
	}
	return n.update(from, to, func(l *link) { l.loss = rate })
}

// LoseAll drops the given fraction of every message, drawn per message, on
// top of the loss of its route.
func (n *Net) LoseAll(rate float64) error {
	if err := checkRate(rate); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all.loss = rate
	return nil
}

// Heal removes every fault: cuts, partitions, delays and loss.
func (n *Net) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.links)
	n.all = link{}
}

// update changes the link of one route of known nodes.
func (n *Net) update(from, to raft.ServerAddress, change func(*link)) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.knownLocked(from); err != nil {
		return err
	}
	if err := n.knownLocked(to); err != nil {
		return err
	}
	if from == to {
		return fmt.Errorf("faultnet: route from %q to itself; a fault needs two different nodes", from)
	}
	n.updateLocked(route{from, to}, change)
	return nil
}

func (n *Net) updateLocked(r route, change func(*link)) {
	l := n.links[r]
	change(&l)
	n.links[r] = l
}

func (n *Net) knownLocked(addr raft.ServerAddress) error {
	if _, ok := n.nodes[addr]; !ok {
		return fmt.Errorf("faultnet: no node at %q; make its transport first", addr)
	}
	return nil
}

func checkDelay(delay, jitter time.Duration) error {
	if delay < 0 || jitter < 0 {
		return fmt.Errorf("faultnet: delay %v and jitter %v must not be negative", delay, jitter)
	}
	return nil
}

func checkRate(rate float64) error {
	if !(rate >= 0 && rate <= 1) {
		return fmt.Errorf("faultnet: loss rate %v is outside [0, 1]", rate)
	}
	return nil
}

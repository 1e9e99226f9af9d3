package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// Config is what a Node is opened with.
type Config struct {
	ID        raft.ServerID // required: this member's id in the cluster
	Transport raft.Transport
	// API is each member's API address ("host:port") by id: the leader hint
	// a follower answers with.
	API map[raft.ServerID]string
	// Dir holds the log and stable store (raft-wal, in Dir/wal) and the
	// snapshots; empty keeps them in memory, for tests.
	Dir string
	// Raft tunes raft; nil is DefaultRaftConfig(). LocalID is set from ID.
	Raft *raft.Config
	// Bootstrap lists the members of a new cluster. A node with state on
	// disk ignores it; nil waits to be added by the leader.
	Bootstrap []raft.Server
	// Wall reads the leader's clock to stamp commands; nil is time.Now.
	Wall func() time.Time
	// ApplyTimeout bounds how long a call waits to enter raft's queue;
	// 0 is 5 s.
	ApplyTimeout time.Duration
	// ReapEvery is how often the leader puts a Reap in the log, so what time
	// ends (sessions, deadlines, holds) ends without a call; 0 is 1 s.
	ReapEvery time.Duration
	// CheckEvery is how many log entries apart the leader asks the replicas
	// to compare checksums; 0 is 10,000.
	CheckEvery uint64
	// LeaderWait bounds how long a call is held while no member can take
	// it (a transfer or an election is under way) before it is refused;
	// 0 is twice raft's election timeout.
	LeaderWait time.Duration
}

// Node is one member of a replicated cluster: a raft instance over an FSM.
// On the leader its methods stamp and apply commands and serve
// linearizable reads; on a follower they fail with *ErrNotLeader. Safe for
// concurrent use.
type Node struct {
	cfg   Config
	fsm   *FSM
	raft  *raft.Raft
	store io.Closer // the log and stable store, nil in memory

	silent  time.Duration // how long a follower names a leader it has not heard from
	reads   reads
	beats   beats
	grace   grace
	leading leading
	batches batches
	changes changes

	stop   chan struct{} // closed by Shutdown first
	halted chan struct{} // closed by Shutdown once raft has stopped
	done   sync.WaitGroup
	once   sync.Once
}

// Open starts a member. It bootstraps a new cluster when cfg.Bootstrap is
// set and there is no state yet.
func Open(cfg Config) (*Node, error) {
	if cfg.ID == "" || cfg.Transport == nil {
		return nil, errors.New("open cluster member: the config needs an id and a transport")
	}
	cfg = withDefaults(cfg)
	rc := DefaultRaftConfig()
	if cfg.Raft != nil {
		c := *cfg.Raft
		rc = &c
	}
	rc.LocalID = cfg.ID
	if rc.Logger == nil {
		rc.Logger = hclog.NewNullLogger()
	}
	if cfg.LeaderWait == 0 {
		cfg.LeaderWait = 2 * rc.ElectionTimeout
	}
	n := &Node{cfg: cfg, fsm: NewFSM(), silent: rc.HeartbeatTimeout / 4, stop: make(chan struct{}), halted: make(chan struct{})}
	n.leading.init()
	logs, stable, snaps, err := n.stores(rc.Logger)
	if err != nil {
		return nil, err
	}
	if err := recoverIfAsked(cfg, rc, logs, stable, snaps); err != nil {
		n.closeStore()
		return nil, err
	}
	if err := bootstrap(cfg, rc, logs, stable, snaps); err != nil {
		n.closeStore()
		return nil, err
	}
	if n.raft, err = raft.NewRaft(rc, n.fsm, logs, stable, snaps, cfg.Transport); err != nil {
		n.closeStore()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	n.done.Add(2)
	go n.duties()
	go n.watch()
	return n, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Wall == nil {
		cfg.Wall = time.Now
	}
	if cfg.ApplyTimeout == 0 {
		cfg.ApplyTimeout = 5 * time.Second
	}
	if cfg.ReapEvery == 0 {
		cfg.ReapEvery = time.Second
	}
	if cfg.CheckEvery == 0 {
		cfg.CheckEvery = 10_000
	}
	return cfg
}

func (n *Node) stores(logger hclog.Logger) (raft.LogStore, raft.StableStore, raft.SnapshotStore, error) {
	if n.cfg.Dir == "" {
		mem := raft.NewInmemStore()
		return mem, mem, raft.NewInmemSnapshotStore(), nil
	}
	if err := os.MkdirAll(n.cfg.Dir, 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("create cluster data directory: %w", err)
	}
	if err := refuseBoltLog(n.cfg.Dir); err != nil {
		return nil, nil, nil, err
	}
	lock, err := lockDir(n.cfg.Dir)
	if err != nil {
		return nil, nil, nil, err
	}
	logs, w, snaps, err := openDiskStores(n.cfg.Dir, logger)
	if err != nil {
		_ = lock.Close()
		return nil, nil, nil, err
	}
	n.store = diskStores{log: w, lock: lock}
	return logs, w, snaps, nil
}

func bootstrap(cfg Config, rc *raft.Config, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore) error {
	if len(cfg.Bootstrap) == 0 {
		return nil
	}
	has, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil || has {
		return err
	}
	if err := raft.BootstrapCluster(rc, logs, stable, snaps, cfg.Transport, raft.Configuration{Servers: cfg.Bootstrap}); err != nil {
		return fmt.Errorf("bootstrap cluster: %w", err)
	}
	return nil
}

func (n *Node) closeStore() {
	if n.store != nil {
		_ = n.store.Close()
	}
}

// Shutdown stops the member's duties and raft, and closes its stores. It
// is idempotent and waits for what it stops. Calls held for a leader end
// with their refusal; calls whose command raft had taken end with their
// answer, or with ErrUnknownOutcome once raft has stopped without giving
// one.
func (n *Node) Shutdown() error {
	var err error
	n.once.Do(func() {
		close(n.stop)
		n.done.Wait()
		err = n.raft.Shutdown().Error()
		close(n.halted)
		n.closeStore()
	})
	return err
}

// Raft returns the member's raft instance, for membership and tests.
func (n *Node) Raft() *raft.Raft { return n.raft }

// FSM returns the member's replica.
func (n *Node) FSM() *FSM { return n.fsm }

// notLeader is the error a call gets on a member that cannot take it. It
// names the leader this member knows of, never itself (a leader that
// refuses a call, its leadership being transferred, knows no other yet),
// and not one it has not heard from for a quarter of a heartbeat timeout
// (the leader may be dead; a leader sends a heartbeat at least every
// fifth of it, so a live one is named again within milliseconds).
func (n *Node) notLeader() error {
	_, id := n.raft.LeaderWithID()
	if id == n.cfg.ID || (n.raft.State() == raft.Follower && time.Since(n.raft.LastContact()) > n.silent) {
		return &ErrNotLeader{}
	}
	return &ErrNotLeader{Leader: n.APIOf(id)}
}

// applied is what a command's application answered.
type applied struct {
	r     *Result
	index uint64
}

// apply stamps cmd with the caller's session and request id and the
// leader's time, puts it in the log and returns what the leader's replica
// answered. A call no member can take now is held (see hold). A command
// raft refused before it entered the log is *ErrNotLeader; one whose fate
// the leader lost track of is ErrUnknownOutcome, never tried again here.
func (n *Node) apply(c *engine.Call, cmd *Command) (*Result, uint64, error) {
	if c != nil {
		cmd.Session, cmd.Request = c.Session, c.Request
	}
	a, err := hold(context.Background(), n, func() (applied, error) {
		if n.raft.State() != raft.Leader {
			return applied{}, n.notLeader()
		}
		if err := n.graceOnce(); err != nil {
			return applied{}, err
		}
		put := n.submit
		if batchable(cmd.Op) {
			put = n.join
		}
		r, index, err := put(c, cmd)
		return applied{r, index}, err
	})
	return a.r, a.index, err
}

// submit stamps the time into cmd and puts it in the log. While a
// transfer this member runs is under way it refuses, as raft does.
func (n *Node) submit(c *engine.Call, cmd *Command) (*Result, uint64, error) {
	f, err := n.propose(func() []byte {
		cmd.Now = n.cfg.Wall().UnixNano()
		return cmd.Encode()
	}, func() {})
	if err != nil {
		return nil, 0, err
	}
	return answer(c, f.Response().(*Result), f.Index())
}

// answer gives the engine's sequence number of r to the call c, if any,
// and returns r, the log index it applied at and its error.
func answer(c *engine.Call, r *Result, index uint64) (*Result, uint64, error) {
	if c != nil {
		c.Seq = r.Seq
	}
	return r, index, r.Err
}

// propose puts entry() in raft's queue and waits for raft's answer, as
// the failure a call answers (applyFailed). While a transfer this member
// runs is under way it refuses with *ErrNotLeader instead, entry unmade;
// either way entered runs once the queue was entered or refused, before
// the wait. The command holds leading.inLog for reading throughout, so a
// transfer starts only once it is answered.
func (n *Node) propose(entry func() []byte, entered func()) (raft.ApplyFuture, error) {
	n.leading.inLog.RLock()
	defer n.leading.inLog.RUnlock()
	if n.leading.moving.Load() {
		entered()
		return nil, n.notLeader()
	}
	f := n.raft.Apply(entry(), n.cfg.ApplyTimeout)
	entered()
	if err := n.await(f); err != nil {
		return nil, n.applyFailed(err)
	}
	return f, nil
}

// applyFailed is what a call answers when raft failed its command with
// err: a command raft had no room for is refused, to be retried; any
// other failure is what a membership change answers (changeError).
func (n *Node) applyFailed(err error) error {
	if errors.Is(err, raft.ErrEnqueueTimeout) {
		return fmt.Errorf("the cluster's leader is too busy to take the call; retry it: %w", err)
	}
	return n.changeError(err)
}

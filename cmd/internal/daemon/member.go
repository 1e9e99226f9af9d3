package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/cluster"
	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/metrics"
	"governor.dev/governor/cmd/internal/server"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// seedEvery is how often a member looks whether it has become the leader
// of a term it has not seeded yet.
const seedEvery = 100 * time.Millisecond

// member is what a governord that is a cluster member runs beside its API:
// its replica and raft instance, and the seeding of the configuration by
// the leader, once in each term it leads. The leader's reaping is the
// node's own duty (cluster.Config.ReapEvery); no member reaps on its own.
type member struct {
	node  *cluster.Node
	trans *raft.NetworkTransport
	api   map[raft.ServerID]string // each member's API address

	tenants atomic.Pointer[map[string]engine.ID] // as the last seeding found them; nil before

	cancel context.CancelFunc // stops seeding
	done   chan struct{}      // closed when seeding has stopped
	once   sync.Once
}

// openMember starts this process's cluster member on the configuration's
// cluster section and builds the API on it. clock, if set, stamps the
// commands this member leads with. On error nothing is left open.
func (d *Daemon) openMember(ctx context.Context, clock engine.Clock) error {
	cl := d.cfg.Cluster
	if err := cl.PrepareDataDir(); err != nil {
		return err
	}
	self, _ := cl.Self()
	advertise, err := net.ResolveTCPAddr("tcp", self.Raft)
	if err != nil {
		return fmt.Errorf("cluster.peers: resolve this member's raft address %s: %w", self.Raft, err)
	}
	trans, err := d.memberTransport(cl, advertise)
	if err != nil {
		return err
	}
	m := &member{trans: trans, api: make(map[raft.ServerID]string, len(cl.Peers)), done: make(chan struct{})}
	servers := make([]raft.Server, 0, len(cl.Peers))
	for _, p := range cl.Peers {
		m.api[raft.ServerID(p.ID)] = p.API
		servers = append(servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Raft)})
	}
	nc := cluster.Config{ID: raft.ServerID(cl.NodeID), Transport: trans, API: m.api, Dir: cl.DataDir, ReapEvery: d.cfg.ReapInterval, Raft: cl.RaftConfig(cluster.DefaultRaftConfig())}
	if cl.Bootstrap {
		nc.Bootstrap = servers
	}
	if clock != nil {
		nc.Wall = clock.Now
	}
	if m.node, err = cluster.Open(nc); err != nil {
		_ = trans.Close()
		return fmt.Errorf("start cluster member %s in %s: %w", cl.NodeID, cl.DataDir, err)
	}
	d.member = m
	d.metrics = metrics.ForEngine(m.node.FSM().Engine())
	if err := d.buildAPI(ctx, server.Replicated(m.node)); err != nil {
		return errors.Join(err, m.close())
	}
	seeding, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go m.seedEachTerm(seeding, d.cfg, d.log)
	return nil
}

// tenant is a configured tenant's node, once a leader has seeded it.
func (m *member) tenant(name string) (engine.ID, bool) {
	t := m.tenants.Load()
	if t == nil {
		return 0, false
	}
	id, ok := (*t)[name]
	return id, ok
}

// seedEachTerm seeds the configuration each time this member becomes the
// leader of a new term, as a single governord does at start (reconcile.go),
// through the log. A failed seeding is retried while the term lasts.
func (m *member) seedEachTerm(ctx context.Context, cfg *config.Config, log *slog.Logger) {
	defer close(m.done)
	t := time.NewTicker(seedEvery)
	defer t.Stop()
	var seeded uint64 // the last term seeded
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r := m.node.Raft()
		term := r.CurrentTerm()
		if r.State() != raft.Leader || term == seeded {
			continue
		}
		if err := m.seed(ctx, cfg, log); err != nil {
			log.Warn("seeding the configuration as the cluster's leader failed; retrying", "term", term, "err", err)
			continue
		}
		seeded = term
		log.Info("leading the cluster", "term", term)
	}
}

// seed applies the configuration's settings, tenants and bounds.
func (m *member) seed(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	if err := m.node.Configure(&engine.Call{}, engineSettings(cfg)); err != nil {
		return fmt.Errorf("configure the engine: %w", err)
	}
	tenants, err := seedThrough(ctx, m.node, func(context.Context, uint64) error { return nil }, cfg, log)
	if err != nil {
		return fmt.Errorf("seed the tenants: %w", err)
	}
	if err := m.node.SetBounds(cfg.EngineBounds(tenants)); err != nil {
		return fmt.Errorf("set the tenants' bounds: %w", err)
	}
	m.tenants.Store(&tenants)
	return nil
}

// stopSeeding stops the seeding goroutine and waits for it. It may be
// called more than once.
func (m *member) stopSeeding() {
	m.once.Do(func() {
		if m.cancel != nil {
			m.cancel()
			<-m.done
		}
	})
}

// close stops the member: seeding, raft, its stores and its transport.
func (m *member) close() error {
	m.stopSeeding()
	err := m.node.Shutdown()
	if err != nil {
		_ = m.trans.Close()
		return err
	}
	return m.trans.Close()
}

// gate answers every GovernorService call on a member that is not the
// leader with NotLeader, naming the leader's API address, before it reaches
// the server: a follower serves nothing from its replica. While no leader
// is known (an election), it holds the call first, as cluster.Node does,
// until this member leads or knows the leader. The leader's own
// calls that lose the leadership midway are answered the same by the
// server. Health checks and the dashboard's files are served on every
// member. WatchNode too is served by the leader only: its streams end with
// Unavailable once it stops leading. ClusterStatus passes on every member:
// it reads raft's own view, not the replica.
func (d *Daemon) gate(next http.Handler) http.Handler {
	if d.member == nil {
		return next
	}
	prefix := "/" + governorv1connect.GovernorServiceName + "/"
	errs := connect.NewErrorWriter()
	node := d.member.node
	r := node.Raft()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var nl *cluster.ErrNotLeader
		if strings.HasPrefix(req.URL.Path, prefix) && req.URL.Path != governorv1connect.GovernorServiceClusterStatusProcedure &&
			r.State() != raft.Leader && errors.As(node.AwaitLeader(req.Context()), &nl) {
			_ = errs.Write(w, req, server.NotLeader(nl.Leader))
			return
		}
		next.ServeHTTP(w, req)
	})
}

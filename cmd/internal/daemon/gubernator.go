package daemon

import (
	"crypto/tls"
	"fmt"
	"net/http"

	"governor.dev/governor/cmd/internal/gubernator"
	"governor.dev/governor/cmd/internal/server"
	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
)

// handler is what the API port serves: governord's API and, when the
// configuration enables it, the Gubernator-compatible API beside it. It
// needs the bound address, which the Gubernator API reports as its own.
func (d *Daemon) handler() (http.Handler, error) {
	g := d.cfg.Gubernator
	if !g.Enabled {
		return d.api.Handler(), nil
	}
	opts, err := d.guberBackend()
	if err != nil {
		return nil, err
	}
	svc, err := gubernator.New(gubernator.Options{
		Limiter: opts.Limiter,
		Record:  opts.Record,
		Forward: opts.Forward,
		Keys:    d.cfg.KeyMatcher(),
		Tenant:  g.Tenant,
		Address: d.apiAddr.String(),
		Logger:  d.log,
		Observe: d.metrics.ObserveCall,
		Tracing: d.tracing,
	})
	if err != nil {
		return nil, fmt.Errorf("build the Gubernator API: %w", err)
	}
	d.guber = svc
	mux := http.NewServeMux()
	mux.Handle("/", d.api.Handler())
	svc.Register(mux)
	return mux, nil
}

// guberBackend is where the Gubernator API charges: the engine of a
// governord alone, or, on a cluster member, the log through the leader, to
// which a follower forwards every call.
func (d *Daemon) guberBackend() (gubernator.Options, error) {
	g := d.cfg.Gubernator
	if d.member == nil {
		tenant, ok := d.tenants[g.Tenant]
		if !ok {
			return gubernator.Options{}, fmt.Errorf("the Gubernator API's tenant %q has no node", g.Tenant)
		}
		return gubernator.Options{Limiter: gubernator.NewLimiter(d.store.Engine, tenant, g.Resource), Record: d.store}, nil
	}
	var tlsConfig *tls.Config
	if d.cfg.TLS.Enabled() {
		ca, err := loadCA(d.cfg.Cluster.TLS.CAFile)
		if err != nil {
			return gubernator.Options{}, err
		}
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: ca}
	}
	return gubernator.Options{
		Limiter: &memberLimiter{m: d.member, tenant: g.Tenant, resource: g.Resource},
		Record:  server.Replicated(d.member.node),
		Forward: newLeaderForward(d.member, tlsConfig),
	}, nil
}

// closeAPIs makes every later call to either API Unavailable.
func (d *Daemon) closeAPIs() {
	d.api.Close()
	if d.guber != nil {
		d.guber.Close()
	}
}

// reflected names the services served beside GovernorService that server
// reflection lists: Gubernator's when it is enabled.
func (d *Daemon) reflected() []string {
	if !d.cfg.Gubernator.Enabled {
		return nil
	}
	return []string{gubernatorv1connect.V1Name}
}

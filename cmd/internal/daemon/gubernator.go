package daemon

import (
	"fmt"
	"net/http"

	"governor.dev/governor/cmd/internal/gubernator"
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
	tenant, ok := d.tenants[g.Tenant]
	if !ok {
		return nil, fmt.Errorf("the Gubernator API's tenant %q has no node", g.Tenant)
	}
	svc, err := gubernator.New(gubernator.Options{
		Limiter: gubernator.NewLimiter(d.store.Engine, tenant, g.Resource),
		Record:  d.store,
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

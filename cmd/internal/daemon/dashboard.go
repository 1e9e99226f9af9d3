package daemon

import (
	"net/http"

	"governor.dev/governor/cmd/internal/web"
)

// withDashboard serves the browser dashboard under /ui/ beside the API,
// unless the configuration turns it off.
func (d *Daemon) withDashboard(api http.Handler) http.Handler {
	if !d.cfg.Dashboard {
		return api
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	ui := web.Handler()
	mux.Handle(web.Prefix, ui)
	mux.Handle(web.Prefix[:len(web.Prefix)-1], ui)
	return mux
}

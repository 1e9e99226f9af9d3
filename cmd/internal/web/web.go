// Package web serves governord's dashboard: the TypeScript app in src/,
// built by esbuild into dist/, which is committed and embedded here so that
// building governord needs no Node. A test fails when dist/ is not what
// the sources build to. Rebuild with `npm ci && npm run build` in cmd/internal/web/.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed dist
var dist embed.FS

// Prefix is the path the dashboard is served under.
const Prefix = "/ui/"

// policy lets the page load only its own files and call only its own
// origin, and no other site frame it.
const policy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the dashboard's files under Prefix, and redirects the
// prefix without its slash to it. The files hold no secret: the page asks
// for an API key and calls the API like any client.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("web: the embedded dashboard has no dist directory: " + err.Error())
	}
	files := http.StripPrefix(Prefix[:len(Prefix)-1], http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == Prefix[:len(Prefix)-1] {
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
			return
		}
		files.ServeHTTP(w, r)
	})
}

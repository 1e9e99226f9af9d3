package daemon

import (
	"net/http"
	"testing"
)

// The dashboard is served under /ui/ on the API port, and not at all when
// the configuration turns it off; the API answers either way.
func TestDashboardOnTheAPIPort(t *testing.T) {
	for _, on := range []bool{true, false} {
		cfg := testConfig("")
		cfg.Dashboard = on
		d := startDaemon(t, cfg, Options{})
		res, err := http.Get(d.URL() + "/ui/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if want := map[bool]int{true: 200, false: 404}[on]; res.StatusCode != want {
			t.Errorf("dashboard %v: GET /ui/ is %d, want %d", on, res.StatusCode, want)
		}
		res, err = http.Get(d.URL() + "/grpc.health.v1.Health/Check")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == 404 {
			t.Errorf("dashboard %v: the API is not served beside it", on)
		}
	}
}

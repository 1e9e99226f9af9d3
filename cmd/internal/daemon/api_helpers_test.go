package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/config"
)

// Keys of the test configurations.
const (
	testAdminKey = "admin-key-0123456789"
	testTeamKey  = "team-a-key-0123456789"
)

// testConfig is a loopback configuration with one tenant, team-a, on the
// record at url; metrics are off.
func testConfig(url string) *config.Config {
	cfg := config.Default()
	cfg.Listen, cfg.MetricsListen, cfg.DatabaseURL = "127.0.0.1:0", "", url
	cfg.AdminKey = testAdminKey
	cfg.Tenants = []config.Tenant{{Name: "team-a", APIKey: testTeamKey, Weight: 1,
		Quotas: map[string]int64{"http": 1_000_000}, Limits: map[string]int64{"db": 4}}}
	cfg.ReapInterval = 50 * time.Millisecond
	return cfg
}

// startDaemon starts a daemon in this process and stops it when t ends.
func startDaemon(t *testing.T, cfg *config.Config, opts Options) *Daemon {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLog()
	}
	d, err := Start(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return d
}

// jsonAPI calls GovernorService with Connect's JSON protocol over
// HTTP/1.1, as curl does.
type jsonAPI struct {
	base   string // http://host:port
	client *http.Client
}

func newJSONAPI(base string) jsonAPI {
	return jsonAPI{base: base, client: &http.Client{Timeout: 10 * time.Second}}
}

// callError is an answer other than 200.
type callError struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
	Leader  string // the Governor-Leader header of a cluster member that does not lead
}

func (e *callError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// call sends in to method with cred as the bearer and decodes the answer
// into out (nil to ignore it).
func (a jsonAPI) call(ctx context.Context, cred, method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/governor.v1.GovernorService/"+method, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+cred)
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		ce := &callError{Status: resp.StatusCode, Leader: resp.Header.Get("Governor-Leader")}
		_ = json.Unmarshal(data, ce)
		return ce
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// consume spends amount of resource on node with cred.
func (a jsonAPI) consume(ctx context.Context, cred string, node uint64, resource string, amount int64) error {
	return a.call(ctx, cred, "Consume", map[string]any{"node_id": node, "resource": resource, "amount": amount}, nil)
}

// ensure finds or creates the child name under cred's scope and returns
// its id.
func (a jsonAPI) ensure(ctx context.Context, cred, name string) (uint64, error) {
	var out struct {
		Node struct {
			ID string `json:"id"`
		} `json:"node"`
	}
	if err := a.call(ctx, cred, "EnsureNode", map[string]any{"name": name}, &out); err != nil {
		return 0, err
	}
	return strconv.ParseUint(out.Node.ID, 10, 64)
}

// session opens a session with key and returns its token.
func (a jsonAPI) session(ctx context.Context, key string) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	err := a.call(ctx, key, "OpenSession", map[string]any{}, &out)
	return out.Token, err
}

// resourceUse is one resource of one node as GetNode describes it.
type resourceUse struct {
	Cap  *int64 // nil without a cap
	Used int64
}

// node describes a node with a session token: its resources.
func (a jsonAPI) node(ctx context.Context, token string, id uint64) (map[string]resourceUse, error) {
	var out struct {
		Node struct {
			Resources map[string]struct {
				Cap  *string `json:"cap"`
				Used string  `json:"used"`
			} `json:"resources"`
		} `json:"node"`
	}
	if err := a.call(ctx, token, "GetNode", map[string]any{"node_id": id}, &out); err != nil {
		return nil, err
	}
	res := make(map[string]resourceUse, len(out.Node.Resources))
	for name, r := range out.Node.Resources {
		var u resourceUse
		u.Used, _ = strconv.ParseInt(r.Used, 10, 64)
		if r.Cap != nil {
			v, _ := strconv.ParseInt(*r.Cap, 10, 64)
			u.Cap = &v
		}
		res[name] = u
	}
	return res, nil
}

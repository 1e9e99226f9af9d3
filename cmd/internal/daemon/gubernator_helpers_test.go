package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/config"
)

// testTeamBKey is the key of a second tenant, whose key may not use the
// Gubernator API kept under team-a.
const testTeamBKey = "team-b-key-0123456789"

// guberStart is a fixed instant for the engine's clock.
var guberStart = time.Unix(1_800_000_000, 0)

// guberConfig is testConfig with a second tenant and the Gubernator API
// kept under team-a, on the record at url.
func guberConfig(url string) *config.Config {
	cfg := testConfig(url)
	cfg.Tenants = append(cfg.Tenants, config.Tenant{Name: "team-b", APIKey: testTeamBKey, Weight: 1})
	cfg.Gubernator = config.Gubernator{Enabled: true, Tenant: "team-a", Resource: config.DefaultGubernatorResource}
	return cfg
}

// curlAnswer is what the real curl binary got: the HTTP status and the
// decoded JSON body.
type curlAnswer struct {
	status int
	body   map[string]any
	raw    string
}

// curl runs the curl binary against url with method, an optional bearer
// key and an optional JSON body.
func curl(t *testing.T, method, url, key, body string) curlAnswer {
	t.Helper()
	path, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl binary on this machine")
	}
	args := []string{"-sS", "-X", method, "-w", "\n%{http_code}", "--max-time", "20"}
	if key != "" {
		args = append(args, "-H", "Authorization: Bearer "+key)
	}
	if body != "" {
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", "@-")
	}
	cmd := exec.Command(path, append(args, url)...)
	cmd.Stdin = strings.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl %s %s: %v: %s", method, url, err, stderr.String())
	}
	i := bytes.LastIndexByte(out, '\n')
	status, err := strconv.Atoi(string(out[i+1:]))
	if err != nil {
		t.Fatalf("curl printed no status: %q", out)
	}
	a := curlAnswer{status: status, raw: string(out[:i])}
	if err := json.Unmarshal(out[:i], &a.body); err != nil {
		t.Fatalf("curl got %d and a body that is not JSON: %q", status, out[:i])
	}
	return a
}

// responses returns the answers of a GetRateLimits body.
func (a curlAnswer) responses(t *testing.T) []map[string]any {
	t.Helper()
	list, ok := a.body["responses"].([]any)
	if a.status != 200 || !ok {
		t.Fatalf("got %d %s, want 200 with responses", a.status, a.raw)
	}
	out := make([]map[string]any, len(list))
	for i, r := range list {
		out[i] = r.(map[string]any)
	}
	return out
}

// summary is one answer in a line: status remaining reset_time retry_after
// error.
func summary(r map[string]any) string {
	return fmt.Sprintf("%v remaining=%v reset=%v retry_after=%v error=%q", r["status"], r["remaining"], r["reset_time"], r["retry_after"], r["error"])
}

// ms is t in unix milliseconds, as the JSON answers write it.
func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// jsonText re-encodes a decoded JSON value with sorted keys and no spaces.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

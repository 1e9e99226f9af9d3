package governor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"governor.dev/governor/internal/testbin"
)

// runGovernord runs cmd/governord as a process of its own
// with a configuration in dir; it returns the API's address and the
// process, killed when t ends.
func runGovernord(t *testing.T, dir string) (string, *testbin.Proc) {
	t.Helper()
	bin := testbin.Build(t, "governor.dev/governor/cmd/governord")
	cfgPath := filepath.Join(dir, "governor.yaml")
	yaml := fmt.Sprintf(`listen: 127.0.0.1:0
metrics_listen: "off"
database_url: %q
admin_key: %s
tenants:
  - name: team-a
    api_key: %s
sessions: {min_ttl: 100ms, default_ttl: 30s, max_ttl: 1h}
reap_interval: 50ms
log: {format: json}
`, "sqlite:"+filepath.Join(dir, "governor.db"), adminKey, teamKey)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testbin.Start(t, bin, dir, nil, "-config", cfgPath)
	return strings.TrimPrefix(p.Serving(), "http://"), p
}

// governord killed: a call that changes state is sent again until every
// context of the client is cancelled, once the heartbeats have failed for
// 80% of the TTL, and then says that its outcome is unknown.
func TestKilledGovernordRefusesAndCancels(t *testing.T) {
	addr, p := runGovernord(t, t.TempDir())
	const ttl = time.Second
	c := dial(t, addr, WithSessionTTL(ttl))
	ctx, _ := task(t, c, Spec{Name: "doomed", Quotas: map[string]int64{"http": 10}})
	sub, _, err := NewTask(ctx, Spec{Name: "doomed-sub"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Consume(sub, "http", 1); err != nil {
		t.Fatal(err)
	}
	p.Signal(syscall.SIGKILL)
	p.Wait(time.Minute)
	_, err = Consume(sub, "http", 1)
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrSessionLost) {
		t.Fatalf("consume after the kill: %v, want ErrOutcomeUnknown, ErrUnavailable and ErrSessionLost", err)
	}
	if _, err := Acquire(sub, "db"); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("acquire after the kill: %v, want ErrSessionLost", err)
	}
	for _, ctx := range []context.Context{ctx, sub} {
		if err := done(t, ctx, ttl); !errors.Is(err, ErrSessionLost) {
			t.Fatalf("context ended with %v, want ErrSessionLost", err)
		}
	}
	if _, _, err := c.NewTask(context.Background(), Spec{Name: "late"}); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("new task after the kill: %v, want ErrSessionLost", err)
	}
}

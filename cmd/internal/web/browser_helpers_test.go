package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/chromedp/chromedp"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/daemon"
	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

const (
	adminKey = "admin-key-0123456789"
	keyA     = "team-a-key-0123456789"
	keyB     = "team-b-key-0123456789"
)

// site is a governord for one browser test: tenants team-a (100 tokens, 1
// db slot) and team-b, the dashboard on.
type site struct {
	t   *testing.T
	d   *daemon.Daemon
	url string
}

func newSite(t *testing.T) *site {
	t.Helper()
	cfg := config.Default()
	cfg.Listen, cfg.MetricsListen, cfg.DatabaseURL = "127.0.0.1:0", "", "sqlite:"+filepath.Join(t.TempDir(), "governor.db")
	cfg.AdminKey = adminKey
	cfg.Tenants = []config.Tenant{
		{Name: "team-a", APIKey: keyA, Weight: 1, Quotas: map[string]int64{"tokens": 100}, Limits: map[string]int64{"db": 1}},
		{Name: "team-b", APIKey: keyB, Weight: 1},
	}
	cfg.ReapInterval = 50 * time.Millisecond
	d, err := daemon.Start(context.Background(), cfg, daemon.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("start governord: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("stop governord: %v", err)
		}
	})
	return &site{t: t, d: d, url: d.URL() + "/ui/"}
}

// session opens a session with key and returns a client on its token.
func (s *site) session(key string) governorv1connect.GovernorServiceClient {
	s.t.Helper()
	conn := clientconn.Config{Addr: s.d.Addr().String(), APIKey: key}
	byKey, err := conn.API(nil)
	if err != nil {
		s.t.Fatal(err)
	}
	res, err := byKey.OpenSession(context.Background(), connect.NewRequest(&governorv1.OpenSessionRequest{}))
	if err != nil {
		s.t.Fatal(err)
	}
	token := res.Msg.Token
	api, err := conn.API(func() string { return token })
	if err != nil {
		s.t.Fatal(err)
	}
	return api
}

// node creates a child of the session's scope.
func (s *site) node(api governorv1connect.GovernorServiceClient, spec *governorv1.NodeSpec) uint64 {
	s.t.Helper()
	res, err := api.CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{Spec: spec}))
	if err != nil {
		s.t.Fatalf("create %s: %v", spec.Name, err)
	}
	return res.Msg.Node.Id
}

// chromiumFlags run a headless Chromium that reaches nothing but loopback.
var chromiumFlags = []chromedp.ExecAllocatorOption{
	chromedp.Headless,
	chromedp.NoSandbox,
	chromedp.DisableGPU,
	chromedp.NoFirstRun,
	chromedp.NoDefaultBrowserCheck,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-extensions", true),
	chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	chromedp.Flag("proxy-server", "127.0.0.1:9"), // nothing listens; loopback bypasses it
}

// browser starts a fresh headless Chromium (its own profile directory) at
// 1280×800 and returns a context to run actions in. Without Chromium the
// test is skipped, or fails under CI, which installs it.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		msg := "Chromium is not installed (apt-get install -y chromium); the dashboard's browser tests cannot run"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800)}, chromiumFlags...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTime(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// run runs actions and fails the test on the first error.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one action and returns its value, failing the test on an error.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// signIn opens the dashboard and signs in with key, and waits for the tree.
func signIn(s *site, key string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(s.url),
		chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), key),
		chromedp.Click(chromedp.CSS("#signin button[type=submit]")),
	)
}

// within waits until the JavaScript expression js is true, for at most d.
func within(d time.Duration, js string) chromedp.Action[chromedp.Void] {
	poll := chromedp.Poll[bool](js, chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(20*time.Millisecond))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := poll(ctx, t); err != nil {
			return chromedp.Void{}, fmt.Errorf("waited %s for %s: %w", d, js, err)
		}
		return chromedp.Void{}, nil
	}
}

// screenshot keeps a picture of the page in GOVERNOR_SCREENSHOTS (if set)
// or in the test's temporary directory, and checks it is a PNG.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := get(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot %s is not a PNG", name)
	}
	dir := os.Getenv("GOVERNOR_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

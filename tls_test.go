package governor

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"governor.dev/governor/internal/testcert"
)

func TestDialOverTLS(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cert, key := testcert.New(t, 1).Write(t, dir)
	cfg.TLS = tlsFiles{CertFile: cert, KeyFile: key}
	g := newGovernordWith(t, cfg)

	c := dial(t, g.addr, WithCAFile(cert))
	ctx, _ := task(t, c, Spec{Name: "tls"})
	if _, err := Consume(ctx, "http", 1); err != nil {
		t.Fatalf("consume over TLS: %v", err)
	}

	t.Setenv("GOVERNOR_ADDR", g.addr)
	t.Setenv("GOVERNOR_API_KEY", teamKey)
	t.Setenv("GOVERNOR_CA_FILE", cert)
	fromEnv, err := Dial(context.Background())
	if err != nil {
		t.Fatalf("dial from the environment: %v", err)
	}
	_ = fromEnv.Close()
	for _, tc := range []struct {
		name string
		opts []Option
		want error
	}{
		{"plain text", []Option{WithCAFile(""), WithTLS(false)}, ErrUnavailable},
		{"unknown CA", []Option{WithCAFile(""), WithTLS(true)}, ErrUnavailable},
		{"missing CA file", []Option{WithCAFile(filepath.Join(dir, "none.pem"))}, ErrInvalid},
	} {
		if _, err := Dial(context.Background(), tc.opts...); !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	t.Setenv("GOVERNOR_TLS", "maybe")
	if _, err := Dial(context.Background()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("GOVERNOR_TLS=maybe: %v, want ErrInvalid", err)
	}
}

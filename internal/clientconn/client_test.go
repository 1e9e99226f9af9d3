package clientconn

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// recorder answers Heartbeat and remembers what each call arrived with.
type recorder struct {
	governorv1connect.UnimplementedGovernorServiceHandler
	mu    sync.Mutex
	auth  []string
	proto []string
}

func (r *recorder) Heartbeat(_ context.Context, req *connect.Request[governorv1.HeartbeatRequest]) (*connect.Response[governorv1.HeartbeatResponse], error) {
	r.mu.Lock()
	r.auth = append(r.auth, req.Header().Get("Authorization"))
	r.proto = append(r.proto, req.Peer().Protocol)
	r.mu.Unlock()
	return connect.NewResponse(&governorv1.HeartbeatResponse{}), nil
}

func serve(t *testing.T, tls bool) (*recorder, *httptest.Server) {
	rec := &recorder{}
	mux := http.NewServeMux()
	mux.Handle(governorv1connect.NewGovernorServiceHandler(rec))
	srv := httptest.NewUnstartedServer(mux)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	if tls {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return rec, srv
}

func TestCredentialOnEveryCall(t *testing.T) {
	rec, srv := serve(t, false)
	cred := "key-1"
	api, err := Config{Addr: srv.Listener.Addr().String()}.API(func() string { return cred }, connect.WithGRPC())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []string{"key-1", "0123456789abcdef0123456789abcdef", ""} {
		cred = c
		if _, err := api.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{})); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"Bearer key-1", "Bearer 0123456789abcdef0123456789abcdef", ""}
	if strings.Join(rec.auth, "|") != strings.Join(want, "|") {
		t.Fatalf("Authorization headers = %q, want %q", rec.auth, want)
	}
}

func TestAPIKeyByDefault(t *testing.T) {
	rec, srv := serve(t, false)
	api, err := Config{Addr: srv.URL, APIKey: "team"}.API(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.Heartbeat(context.Background(), connect.NewRequest(&governorv1.HeartbeatRequest{})); err != nil {
		t.Fatal(err)
	}
	if rec.auth[0] != "Bearer team" {
		t.Fatalf("Authorization = %q, want the configured key", rec.auth[0])
	}
}

func TestTLSWithCAFile(t *testing.T) {
	rec, srv := serve(t, true)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, block, 0o600); err != nil {
		t.Fatal(err)
	}
	addr := srv.Listener.Addr().String()
	ctx := context.Background()

	api, err := Config{Addr: addr, CAFile: ca}.API(nil, connect.WithGRPC())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{})); err != nil {
		t.Fatalf("call over TLS with the server's CA: %v", err)
	}
	if rec.proto[0] != connect.ProtocolGRPC {
		t.Fatalf("protocol = %q, want gRPC over HTTP/2", rec.proto[0])
	}

	untrusted, err := Config{Addr: addr, TLS: true}.API(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := untrusted.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{})); err == nil {
		t.Fatal("a call to a server signed by an unknown CA succeeded")
	}
}

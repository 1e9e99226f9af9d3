package governor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
)

// front stands in front of a real governord on a loopback port of its
// own, as a node of a cluster would: it passes calls on (the leader), or
// refuses every call as a node that is not the leader and names the
// leader, or passes one call on and cuts the connection instead of
// answering, so that the caller cannot know whether it was applied.
type front struct {
	addr  string
	proxy *httputil.ReverseProxy
	srv   *http.Server

	mu     sync.Mutex // guards the fields below
	leader string     // "" passes calls on; else the address a follower names
	cuts   map[string]int
	seen   map[string]int
	conns  map[net.Conn]struct{}
}

type connKey struct{}

// newFront starts a front of the governord at backend for t.
func newFront(t testing.TB, backend string) *front {
	t.Helper()
	target, err := url.Parse("http://" + backend)
	if err != nil {
		t.Fatal(err)
	}
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{Protocols: &h2c}
	proxy.FlushInterval = -1
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a call the client gave up on is no news
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &front{addr: ln.Addr().String(), proxy: proxy, cuts: map[string]int{}, seen: map[string]int{}, conns: map[net.Conn]struct{}{}}
	f.srv = &http.Server{Handler: f, Protocols: &h2c,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ConnState:   f.track}
	go func() { _ = f.srv.Serve(ln) }()
	t.Cleanup(func() { _ = f.srv.Close() })
	return f
}

// follower makes f a node that is not the leader and names leader; it
// cuts the connections it has, so that open streams end.
func (f *front) follower(leader string) {
	f.mu.Lock()
	f.leader = leader
	conns := f.conns
	f.conns = map[net.Conn]struct{}{}
	f.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

// lead makes f pass calls on again.
func (f *front) lead() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leader = ""
}

// cut makes f pass the next n calls of procedure on and cut their
// connections instead of answering them.
func (f *front) cut(procedure string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cuts[procedure] = n
}

// calls is how many calls of procedure reached f.
func (f *front) calls(procedure string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[procedure]
}

func (f *front) track(c net.Conn, s http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch s {
	case http.StateNew:
		f.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(f.conns, c)
	}
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen[r.URL.Path]++
	leader, cut := f.leader, f.cuts[r.URL.Path] > 0
	if cut && leader == "" {
		f.cuts[r.URL.Path]--
	}
	f.mu.Unlock()
	switch {
	case leader != "":
		err := connect.NewError(connect.CodeUnavailable, fmt.Errorf("this governord is not the leader; the leader is at %s", leader))
		err.Meta().Set(clientconn.LeaderHeader, leader)
		_ = connect.NewErrorWriter().Write(w, r, err)
	case cut:
		f.proxy.ServeHTTP(httptest.NewRecorder(), r)
		_ = r.Context().Value(connKey{}).(net.Conn).Close()
	default:
		f.proxy.ServeHTTP(w, r)
	}
}

// refusing is an address where nothing listens.
func refusing(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatal(err)
	}
	return addr
}

// freezer passes connections to a governord through at the TCP level
// until it is frozen; frozen, it reads what arrives and passes nothing on
// either way, like a paused process whose kernel still takes the bytes.
type freezer struct {
	addr   string
	frozen atomic.Bool

	mu    sync.Mutex // guards conns
	conns []net.Conn
}

// newFreezer starts a freezer of the governord at backend for t.
func newFreezer(t testing.TB, backend string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.pipe(c, backend)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.conns {
			_ = c.Close()
		}
	})
	return f
}

func (f *freezer) pipe(c net.Conn, backend string) {
	b, err := net.Dial("tcp", backend)
	if err != nil {
		_ = c.Close()
		return
	}
	f.mu.Lock()
	f.conns = append(f.conns, c, b)
	f.mu.Unlock()
	go f.copy(b, c)
	f.copy(c, b)
}

// copy passes what src sends to dst while f is not frozen.
func (f *freezer) copy(dst, src net.Conn) {
	defer func() { _ = dst.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if f.frozen.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

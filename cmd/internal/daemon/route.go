package daemon

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// router shares one listener between net/http and grpc-go: it reads each
// new connection's first request (sniff) and hands the connection to
// grpc-go when that request is gRPC to one of the prefixes grpc-go serves,
// to net/http otherwise. Connections carrying HTTP/1, Connect, gRPC-Web and
// every other service thus reach net/http as before.
type router struct {
	ln       net.Listener
	prefixes []string      // paths served by grpc-go
	timeout  time.Duration // for the first request to arrive
	http     *queue
	grpc     *queue

	mu       sync.Mutex            // guards the fields below
	sniffing map[net.Conn]struct{} // connections whose first request is awaited
	closed   bool
	wg       sync.WaitGroup // the accept loop and the sniffers
}

// newRouter starts routing ln's connections; HTTP and GRPC are the two
// listeners to serve. ln closes once both are closed.
func newRouter(ln net.Listener, timeout time.Duration, prefixes ...string) *router {
	r := &router{ln: ln, prefixes: prefixes, timeout: timeout, sniffing: map[net.Conn]struct{}{}}
	r.http, r.grpc = newQueue(r), newQueue(r)
	r.wg.Add(1)
	go r.accept()
	return r
}

// HTTP is the listener of the connections net/http serves.
func (r *router) HTTP() net.Listener { return r.http }

// GRPC is the listener of the connections grpc-go serves.
func (r *router) GRPC() net.Listener { return r.grpc }

// accept takes new connections until ln closes, retrying after a
// temporary error as net/http does; any other error is handed to both
// listeners' Accept.
func (r *router) accept() {
	defer r.wg.Done()
	var backoff time.Duration
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if ne, ok := err.(interface{ Temporary() bool }); ok && ne.Temporary() && !r.isClosed() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			r.http.fail(err)
			r.grpc.fail(err)
			return
		}
		backoff = 0
		if !r.track(c) {
			c.Close()
			return
		}
		r.wg.Add(1)
		go r.route(c)
	}
}

// track records c as being sniffed; false once the router is closed.
func (r *router) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.sniffing[c] = struct{}{}
	return true
}

func (r *router) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// route reads c's first request and hands c to the server it is for. A
// connection that sends nothing in time, or breaks, is closed.
func (r *router) route(c net.Conn) {
	defer r.wg.Done()
	_ = c.SetReadDeadline(time.Now().Add(r.timeout))
	seen, call, err := sniff(c)
	r.mu.Lock()
	delete(r.sniffing, c)
	r.mu.Unlock()
	if err != nil && (!call.h2 || !errors.Is(err, errSniff)) {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	var in io.Reader = io.MultiReader(bytes.NewReader(seen), c)
	to := r.http
	switch {
	case err == nil && r.forGRPC(call):
		to = r.grpc
	case call.h2:
		in = &ackDropper{r: in}
	}
	to.put(&replayConn{Conn: c, r: in})
}

// forGRPC says whether call is gRPC (with the protobuf codec, which is
// all grpc-go has) to a path grpc-go serves.
func (r *router) forGRPC(call firstCall) bool {
	if !call.h2 || (call.contentType != "application/grpc" && call.contentType != "application/grpc+proto") {
		return false
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(call.path, p) {
			return true
		}
	}
	return false
}

// closeIfDone closes ln, and every connection still being sniffed, once
// both listeners are closed, and waits for the accept loop and the
// sniffers to end.
func (r *router) closeIfDone() error {
	if !r.http.isClosed() || !r.grpc.isClosed() {
		return nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	for c := range r.sniffing {
		c.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}

// queue is one server's side of a router: a net.Listener whose Accept
// returns the connections routed to it.
type queue struct {
	r      *router
	conns  chan net.Conn
	done   chan struct{} // closed by Close or fail
	once   sync.Once
	err    error // why Accept fails, set before done is closed
	closed bool  // by Close; guarded by r.mu
}

func newQueue(r *router) *queue {
	return &queue{r: r, conns: make(chan net.Conn), done: make(chan struct{})}
}

// put hands c to the server, or closes c when the listener is closed.
func (q *queue) put(c net.Conn) {
	select {
	case q.conns <- c:
	case <-q.done:
		c.Close()
	}
}

// Accept returns the next connection routed here.
func (q *queue) Accept() (net.Conn, error) {
	select {
	case c := <-q.conns:
		return c, nil
	case <-q.done:
		return nil, q.err
	}
}

// fail makes Accept return err from now on.
func (q *queue) fail(err error) {
	q.once.Do(func() {
		q.err = err
		close(q.done)
	})
}

// Close stops this listener; the shared one closes when both have.
func (q *queue) Close() error {
	q.fail(net.ErrClosed)
	q.r.mu.Lock()
	q.closed = true
	q.r.mu.Unlock()
	return q.r.closeIfDone()
}

func (q *queue) isClosed() bool {
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	return q.closed
}

// Addr is the shared listener's address.
func (q *queue) Addr() net.Addr { return q.r.ln.Addr() }

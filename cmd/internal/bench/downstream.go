package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Downstream is the simulated service the workloads call: a real HTTP server
// on loopback that takes Capacity requests at once. A request beyond that is
// shed with 503 after ShedCost; one within it is served with 200 after a
// latency that grows with the load: Base × (1 + load/capacity), where load
// counts every request in the service, shed ones included, because turning
// work away costs the service too. Capacity 0 is a service that is down:
// every request is shed.
//
// Create it with StartDownstream and stop it with Close. Its methods are safe
// for concurrent use; SetCapacity takes effect for the next request.
type Downstream struct {
	base     time.Duration
	shedCost time.Duration
	capacity atomic.Int64

	inflight atomic.Int64 // requests in the service now, shed ones included
	admitted atomic.Int64 // requests being served now

	mu      sync.Mutex // guards the counts and the waiter below
	counts  Counts
	waitFor int64         // the served count reached waits for
	reached chan struct{} // closed once counts.Served is waitFor; nil: no waiter

	srv  *http.Server
	addr string
	done chan struct{} // closed when Serve has returned
}

// Counts are what a Downstream has seen since it started or was last Reset.
type Counts struct {
	Served int64 `json:"served"` // answered 200
	Shed   int64 `json:"shed"`   // answered 503
	Peak   int64 `json:"peak"`   // most requests in the service at once, shed ones included
}

// Sent is every request the service received.
func (c Counts) Sent() int64 { return c.Served + c.Shed }

// DownstreamOptions shape a Downstream.
type DownstreamOptions struct {
	Capacity int64         // requests served at once; 0: down
	Base     time.Duration // latency of a request served alone; at least 1ms
	ShedCost time.Duration // how long a shed request takes; 0 answers at once
}

// StartDownstream listens on 127.0.0.1:0 and serves until Close.
func StartDownstream(o DownstreamOptions) (*Downstream, error) {
	if o.Capacity < 0 || o.Base < time.Millisecond || o.ShedCost < 0 {
		return nil, fmt.Errorf("%w: downstream capacity %d (at least 0), base latency %s (at least 1ms), shed cost %s (at least 0)",
			ErrOptions, o.Capacity, o.Base, o.ShedCost)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the downstream: %w", err)
	}
	d := &Downstream{base: o.Base, shedCost: o.ShedCost, addr: "http://" + ln.Addr().String(), done: make(chan struct{})}
	d.capacity.Store(o.Capacity)
	d.srv = &http.Server{Handler: http.HandlerFunc(d.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(d.done)
		_ = d.srv.Serve(ln) // returns ErrServerClosed after Close
	}()
	return d, nil
}

// URL is the service's base URL.
func (d *Downstream) URL() string { return d.addr }

// SetCapacity changes how many requests the service takes at once.
func (d *Downstream) SetCapacity(n int64) { d.capacity.Store(max(n, 0)) }

// Counts returns what the service has seen.
func (d *Downstream) Counts() Counts {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.counts
}

// Reset zeroes the counts, for a measurement that starts mid-run. A waiter
// of ServedAtLeast stays and counts from zero again.
func (d *Downstream) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.counts = Counts{}
}

// ServedAtLeast returns a channel that is closed once the service has served
// n requests since it started or was last Reset: a phase of a workload that
// ends by what the service did, not by the clock. It replaces the previous
// waiter, whose channel then stays open.
func (d *Downstream) ServedAtLeast(n int64) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	ch := make(chan struct{})
	if d.counts.Served >= n {
		close(ch)
		d.reached = nil
		return ch
	}
	d.waitFor, d.reached = n, ch
	return ch
}

// Close stops the server, ending requests in flight, and waits for it.
func (d *Downstream) Close() error {
	err := d.srv.Close()
	<-d.done
	return err
}

func (d *Downstream) serve(w http.ResponseWriter, r *http.Request) {
	load := d.inflight.Add(1)
	defer d.inflight.Add(-1)
	capacity := d.capacity.Load()
	d.mu.Lock()
	d.counts.Peak = max(d.counts.Peak, load)
	d.mu.Unlock()
	if d.admitted.Add(1) > capacity {
		d.admitted.Add(-1)
		sleep(r.Context(), d.shedCost)
		if r.Context().Err() != nil {
			return
		}
		d.count(false)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	defer d.admitted.Add(-1)
	sleep(r.Context(), d.base+time.Duration(float64(d.base)*float64(load)/float64(capacity)))
	if r.Context().Err() != nil { // the caller gave up: neither served nor shed
		return
	}
	d.count(true)
	w.WriteHeader(http.StatusOK)
}

func (d *Downstream) count(served bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if served {
		d.counts.Served++
		if d.reached != nil && d.counts.Served >= d.waitFor {
			close(d.reached)
			d.reached = nil
		}
	} else {
		d.counts.Shed++
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// newHTTPClient is the workers' client of the downstream: enough idle
// connections kept that a busy run does not churn through sockets.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}}
}

// call sends one GET to the service and reports whether it was served and
// whether it was shed (overload); any other failure is an error.
func call(ctx context.Context, hc *http.Client, url string) (served bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("call the downstream: %w", err)
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusServiceUnavailable:
		return false, nil
	}
	return false, fmt.Errorf("%w: it answered %s", ErrDownstream, resp.Status)
}

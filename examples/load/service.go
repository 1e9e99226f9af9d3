package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// service is a simulated downstream: each request takes longer the more
// run at once, and beyond six at once it answers 503.
type service struct {
	*httptest.Server
	mu        sync.Mutex // guards the fields below
	inflight  int
	most      int
	overloads int
	latencies []time.Duration
}

func startService() *service {
	s := &service{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *service) serve(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.inflight++
	n := s.inflight
	s.most = max(s.most, n)
	s.mu.Unlock()
	start := time.Now()
	time.Sleep(time.Duration(2+n) * time.Millisecond)
	s.mu.Lock()
	s.inflight--
	s.latencies = append(s.latencies, time.Since(start))
	if n > 6 {
		s.overloads++
	}
	s.mu.Unlock()
	if n > 6 {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	_, _ = io.WriteString(w, "page")
}

func (s *service) report(out io.Writer, budget int64, workers, jobs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.Sort(s.latencies)
	q := func(p float64) time.Duration {
		if len(s.latencies) == 0 {
			return 0
		}
		return s.latencies[int(p*float64(len(s.latencies)-1))].Round(time.Millisecond)
	}
	fmt.Fprintf(out, "jobs: %d, at most %d at once\n", jobs, workers)
	fmt.Fprintf(out, "http: %d requests of a budget of %d; %d answered 503\n", len(s.latencies), budget, s.overloads)
	fmt.Fprintf(out, "service: at most %d requests at once; latency p50 %s, p95 %s\n", s.most, q(0.5), q(0.95))
}

// store is a simulated database: what runs under db leases.
type store struct {
	mu       sync.Mutex // guards the fields below
	inflight int
	most     int
	writes   int
}

func (s *store) write(int) error {
	s.mu.Lock()
	s.inflight++
	s.most = max(s.most, s.inflight)
	s.mu.Unlock()
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	s.inflight--
	s.writes++
	s.mu.Unlock()
	return nil
}

func (s *store) report(out io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(out, "db: %d writes, at most %d at once\n", s.writes, s.most)
}

package server

import (
	"context"
	"sync"

	"google.golang.org/protobuf/proto"

	"governor.dev/governor/cmd/internal/engine"
)

// flights are the calls with a request id that are running now. A retry
// that arrives while the first attempt runs waits for it and gets the same
// answer; once the first attempt is answered, the engine's durable memory
// of request ids answers retries.
type flights struct {
	mu sync.Mutex // guards m
	m  map[flightKey]*flight
}

type flightKey struct {
	session engine.ID
	request string
}

// flight is one running call. Its result fields are written before done is
// closed and only read after.
type flight struct {
	method string
	req    proto.Message
	done   chan struct{}
	res    any
	err    error
	again  bool // the first caller went away without an answer: run the call again
}

// once runs call for the principal's request id, or waits for the attempt
// with the same id that is running and returns its answer. A waiter whose
// own arguments differ, or whose leader went away without an answer, runs
// the call itself after the leader finished, so the engine decides (a
// reused id with other arguments is refused there).
func once[T any](ctx context.Context, s *Server, p principal, reqID, method string, req proto.Message, call func() (*T, error)) (*T, error) {
	if reqID == "" {
		return call()
	}
	key := flightKey{p.session, reqID}
	for {
		f, leader := s.flights.join(key, method, req)
		if leader {
			res, err := call()
			s.flights.finish(key, f, res, err, err != nil && ctx.Err() != nil)
			return res, err
		}
		s.log.Debug("a retry waits for the attempt in flight", "method", method, "session", p.session, "request", reqID)
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, toConnect(ctx.Err())
		}
		if !f.again && f.method == method && proto.Equal(f.req, req) {
			res, _ := f.res.(*T)
			return res, f.err
		}
	}
}

// join returns the running flight of key, or registers a new one led by
// the caller.
func (fs *flights) join(key flightKey, method string, req proto.Message) (*flight, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.m[key]; f != nil {
		return f, false
	}
	if fs.m == nil {
		fs.m = make(map[flightKey]*flight)
	}
	f := &flight{method: method, req: req, done: make(chan struct{})}
	fs.m[key] = f
	return f, true
}

func (fs *flights) finish(key flightKey, f *flight, res any, err error, again bool) {
	f.res, f.err, f.again = res, err, again
	fs.mu.Lock()
	delete(fs.m, key)
	fs.mu.Unlock()
	close(f.done)
}

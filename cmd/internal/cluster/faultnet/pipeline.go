package faultnet

import (
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// AppendEntriesPipeline opens a pipeline to target: requests are sent without
// waiting for the replies of the ones before, and arrive, like their replies,
// in the order they were sent, as over one TCP connection. Each leg honours
// the faults of its route; a failed request completes its future with the
// error and a zero response, which makes raft close the pipeline.
func (t *Transport) AppendEntriesPipeline(_ raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	if _, err := t.net.peer(target); err != nil {
		return nil, err
	}
	p := &pipeline{
		t:        t,
		target:   target,
		outbound: make(chan *appendFuture, 128),
		inflight: make(chan *appendFuture, 128),
		done:     make(chan raft.AppendFuture, 128),
		stop:     make(chan struct{}),
	}
	go p.sendLoop()
	go p.replyLoop()
	return p, nil
}

// pipeline runs two goroutines until Close: sendLoop carries requests to the
// peer in order, replyLoop carries their replies back in the same order.
type pipeline struct {
	t        *Transport
	target   raft.ServerAddress
	outbound chan *appendFuture     // accepted by AppendEntries, not yet sent
	inflight chan *appendFuture     // sent (or failed), reply not yet back
	done     chan raft.AppendFuture // completed, for raft
	stop     chan struct{}          // closed by Close
	close    sync.Once
}

// AppendEntries queues a request and returns its future at once.
func (p *pipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	f := &appendFuture{start: time.Now(), req: args, resp: resp, ready: make(chan struct{})}
	select {
	case <-p.stop:
		return nil, raft.ErrPipelineShutdown
	default:
	}
	select {
	case p.outbound <- f:
		return f, nil
	case <-p.stop:
		return nil, raft.ErrPipelineShutdown
	}
}

// Consumer returns the futures in the order their requests were sent.
func (p *pipeline) Consumer() <-chan raft.AppendFuture { return p.done }

// Close stops the pipeline's goroutines; futures not yet completed never
// complete. It may be called more than once.
func (p *pipeline) Close() error {
	p.close.Do(func() { close(p.stop) })
	return nil
}

// sendLoop carries each request through its leg. A request waits for the one
// before it to arrive, so a random delay never reorders them.
func (p *pipeline) sendLoop() {
	for {
		select {
		case f := <-p.outbound:
			f.sent, f.err = p.t.send(p.target, f.req, nil, p.t.net.timeout)
			select {
			case p.inflight <- f:
			case <-p.stop:
				return
			}
		case <-p.stop:
			return
		}
	}
}

// replyLoop waits for each reply in order and completes its future.
func (p *pipeline) replyLoop() {
	for {
		select {
		case f := <-p.inflight:
			if f.err == nil {
				f.complete(p.t.await(f.sent, p.t.net.timeout))
			} else {
				f.complete(nil, f.err)
			}
			select {
			case p.done <- f:
			case <-p.stop:
				return
			}
		case <-p.stop:
			return
		}
	}
}

// appendFuture is one pipelined request. Its fields other than ready are
// written by the pipeline before ready is closed, and read after.
type appendFuture struct {
	start time.Time
	req   *raft.AppendEntriesRequest
	resp  *raft.AppendEntriesResponse
	sent  pending
	err   error
	ready chan struct{}
}

var _ raft.AppendFuture = (*appendFuture)(nil)

func (f *appendFuture) complete(out any, err error) {
	if err == nil {
		if r, ok := out.(*raft.AppendEntriesResponse); ok {
			*f.resp = *r
		} else {
			err = errors.New("faultnet: pipelined AppendEntries answered with something else")
		}
	}
	f.err = err
	close(f.ready)
}

// Error waits for the reply and returns why it failed, if it did.
func (f *appendFuture) Error() error {
	<-f.ready
	return f.err
}

// Start returns when the request was queued.
func (f *appendFuture) Start() time.Time { return f.start }

// Request returns the request.
func (f *appendFuture) Request() *raft.AppendEntriesRequest { return f.req }

// Response returns the reply, zero when the request failed.
func (f *appendFuture) Response() *raft.AppendEntriesResponse { return f.resp }

package governor

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultTransportHold is how long Transport lets a request hold its lease
// when no WithMaxHold is given: a body never closed frees its slot then.
const DefaultTransportHold = time.Minute

// Transport returns an http.RoundTripper that governs each request with
// the task in its context: it charges one ResourceHTTP unit, holds one
// ClassHTTP lease until the response body is closed (or the maximum hold
// runs out), and reports the time to the response and whether the
// downstream signalled overload: a 429 or 503, or a Retry-After header
// (seconds or an HTTP date) on any answer but a redirect. It never sleeps:
// the response, header included, goes to the caller, and the report feeds
// governord's adaptive limit of the class, which slows every caller of
// that downstream. A nil base is http.DefaultTransport.
//
// A request must carry the task's context, so build it with
// http.NewRequestWithContext; one without a task, such as any made by
// http.Client's Get, Post or Head, fails with ErrNoTask:
//
//	httpClient := &http.Client{Transport: governor.Transport(nil)}
//	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
//	if err != nil {
//		return err
//	}
//	resp, err := httpClient.Do(req) // a *DeniedError when the "http" budget is spent
func Transport(base http.RoundTripper, opts ...LeaseOption) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, opts: append([]LeaseOption{WithMaxHold(DefaultTransportHold)}, opts...)}
}

type transport struct {
	base http.RoundTripper
	opts []LeaseOption
}

var _ http.RoundTripper = (*transport)(nil)

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if _, err := Consume(ctx, ResourceHTTP, 1); err != nil {
		closeBody(req)
		return nil, err
	}
	l, err := Acquire(ctx, ClassHTTP, tr.opts...)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	start := time.Now()
	resp, err := tr.base.RoundTrip(req)
	if err != nil {
		return nil, errors.Join(err, l.Release(Report{Latency: time.Since(start)}))
	}
	rep := Report{Latency: time.Since(start), Overloaded: overloaded(resp)}
	resp.Body = &leasedBody{ReadCloser: resp.Body, lease: l, report: rep}
	return resp, nil
}

// overloaded says whether a response signals overload: 429, 503, or a
// valid Retry-After on anything but a redirect, where the header only
// delays the redirect.
func overloaded(resp *http.Response) bool {
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return true
	case code >= 300 && code < 400:
		return false
	}
	return validRetryAfter(resp.Header.Get("Retry-After"))
}

// validRetryAfter says whether v is a Retry-After value: a number of
// seconds or an HTTP date.
func validRetryAfter(v string) bool {
	if v == "" {
		return false
	}
	if _, err := strconv.ParseUint(v, 10, 63); err == nil {
		return true
	}
	_, err := http.ParseTime(v)
	return err == nil
}

// closeBody closes a request's body the base transport will not see, as
// the RoundTripper contract asks.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// leasedBody releases its request's lease when closed.
type leasedBody struct {
	io.ReadCloser
	lease  *Lease
	report Report
	once   sync.Once
}

var _ io.ReadCloser = (*leasedBody)(nil)

func (b *leasedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { err = errors.Join(err, b.lease.Release(b.report)) })
	return err
}

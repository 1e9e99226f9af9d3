package gubernator

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"connectrpc.com/connect"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// forwardTo is a Forwarder that answers with res when handled, and
// records what it was given.
type forwardTo struct {
	handled   bool
	res       *gubernatorv1.GetRateLimitsResp
	auth      []string
	forwarded []bool
}

func (f *forwardTo) Forward(_ context.Context, auth string, forwarded bool, _ *gubernatorv1.GetRateLimitsReq) (*gubernatorv1.GetRateLimitsResp, bool, error) {
	f.auth, f.forwarded = append(f.auth, auth), append(f.forwarded, forwarded)
	return f.res, f.handled, nil
}

func forwardCall(t *testing.T, lim Limiter, fw Forwarder, key string, forwarded bool) (*connect.Response[gubernatorv1.GetRateLimitsResp], error) {
	t.Helper()
	svc, err := New(Options{Limiter: lim, Record: &memoryRecord{}, Keys: matchKey, Tenant: "acme", Logger: slog.New(slog.DiscardHandler), Forward: fw})
	if err != nil {
		t.Fatal(err)
	}
	req := connect.NewRequest(&gubernatorv1.GetRateLimitsReq{Requests: []*gubernatorv1.RateLimitReq{{Name: "n", UniqueKey: "k", Hits: 1, Limit: 5, Duration: 1000}}})
	if key != "" {
		req.Header().Set("Authorization", "Bearer "+key)
	}
	if forwarded {
		req.Header().Set(ForwardedHeader, "1")
	}
	return svc.GetRateLimits(context.Background(), req)
}

// A call the forwarder handles is its answer, and the limiter is not
// asked; it is given the caller's credential and whether another member
// passed the call on. An unauthenticated call never reaches it.
func TestForwardedCallIsTheForwardersAnswer(t *testing.T) {
	lim := &scripted{answer: under}
	want := &gubernatorv1.GetRateLimitsResp{Responses: []*gubernatorv1.RateLimitResp{{Remaining: 42}}}
	fw := &forwardTo{handled: true, res: want}
	res, err := forwardCall(t, lim, fw, keyTenant, true)
	if err != nil || res.Msg != want {
		t.Fatalf("got %v, %v; want the forwarder's answer", res, err)
	}
	if len(lim.seen()) != 0 {
		t.Fatal("the limiter was asked for a forwarded call")
	}
	if len(fw.auth) != 1 || fw.auth[0] != "Bearer "+keyTenant || !fw.forwarded[0] {
		t.Fatalf("the forwarder got %q, forwarded %v", fw.auth, fw.forwarded)
	}
	if _, err := forwardCall(t, lim, fw, "", false); connect.CodeOf(err) != connect.CodeUnauthenticated || len(fw.auth) != 1 {
		t.Fatalf("a call without a key: %v, forwarder asked %d times", err, len(fw.auth))
	}
}

// A call the forwarder leaves is answered here; a limiter's connect error
// is the call's answer as it is.
func TestUnforwardedCallIsAnsweredHere(t *testing.T) {
	lim := &scripted{answer: under}
	res, err := forwardCall(t, lim, &forwardTo{}, keyTenant, false)
	if err != nil || len(lim.seen()) != 1 || res.Msg.Responses[0].Remaining != 4 {
		t.Fatalf("got %v, %v, %d checks; want the limiter's answer", res, err, len(lim.seen()))
	}
	busy := &scripted{answer: func(Check) (Verdict, error) {
		return Verdict{}, connect.NewError(connect.CodeUnavailable, errors.New("the leader changed"))
	}}
	if _, err := forwardCall(t, busy, &forwardTo{}, keyTenant, false); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("a limiter's Unavailable answered %v", err)
	}
}

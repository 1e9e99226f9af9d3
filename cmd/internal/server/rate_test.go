package server

import (
	"context"
	"strconv"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestRateCalls: a leaky rate cap set over the API admits a burst, books
// slots with max_wait, refuses beyond it with the wait it needed, keeps its
// bookings across a restart, and is refilled by ResetRate.
func TestRateCalls(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	cl, _ := e.session(keyA)
	perMinute := &governorv1.Rate{Limit: 10, Period: durationpb.New(time.Minute), Burst: 2, Algorithm: governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET}
	job, err := cl.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "job", Rates: map[string]*governorv1.Rate{"vendor": perMinute}}}))
	if err != nil {
		t.Fatal(err)
	}
	id := job.Msg.Node.Id
	if r := job.Msg.Node.Rates["vendor"]; r.GetRemaining() != 2 || r.GetRate().GetAlgorithm() != governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET {
		t.Fatalf("create: %+v", job.Msg.Node.Rates)
	}
	consume := func(amount int64, wait time.Duration) (*governorv1.ConsumeResponse, error) {
		req := &governorv1.ConsumeRequest{NodeId: id, Resource: "vendor", Amount: amount}
		if wait > 0 {
			req.MaxWait = durationpb.New(wait)
		}
		res, err := cl.Consume(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, err
		}
		return res.Msg, nil
	}
	now := e.clock.Now()
	for i, want := range []time.Duration{0, 0, 6 * time.Second, 12 * time.Second} {
		res, err := consume(1, 15*time.Second)
		status := governorv1.ConsumeStatus_CONSUME_STATUS_OK
		if want > 0 {
			status = governorv1.ConsumeStatus_CONSUME_STATUS_SCHEDULED
		}
		if err != nil || res.Status != status || res.RetryAfter.AsDuration() != want {
			t.Fatalf("consume %d: %v %+v, want %s after %s", i, err, res, status, want)
		}
	}
	_, err = consume(1, 15*time.Second)
	if d := detail[governorv1.Denial](t, err); code(err) != "resource_exhausted" || d.RetryAfter.AsDuration() != 18*time.Second || d.Rate.GetLimit() != 10 || d.NeverFits {
		t.Fatalf("beyond max_wait: %v %+v", err, d)
	}
	_, err = consume(3, time.Minute)
	if d := detail[governorv1.Denial](t, err); !d.NeverFits || d.RetryAfter != nil {
		t.Fatalf("more than the burst: %v %+v", err, d)
	}

	e.restart()
	cl, _ = e.session(keyA)
	peek, err := consume(0, 0)
	if err != nil || peek.GetRemaining() != 0 || !peek.ResetTime.AsTime().Equal(now.Add(24*time.Second)) {
		t.Fatalf("peek after a restart: %v %+v, want the bookings kept (full at +24s)", err, peek)
	}
	if _, err := consume(1, 0); code(err) != "resource_exhausted" {
		t.Fatalf("a plain consume on the booked bucket after a restart: %v", err)
	}
	set, err := cl.SetRate(ctx, connect.NewRequest(&governorv1.SetRateRequest{NodeId: id, Resource: "vendor", Rate: perMinute}))
	if err != nil || !set.Msg.Node.Rates["vendor"].InDebt {
		t.Fatalf("set rate: %v %+v", err, set)
	}
	reset, err := cl.ResetRate(ctx, connect.NewRequest(&governorv1.ResetRateRequest{NodeId: id, Resource: "vendor"}))
	if err != nil || reset.Msg.Node.Rates["vendor"].Remaining != 2 || reset.Msg.Node.Rates["vendor"].InDebt {
		t.Fatalf("reset: %v %+v", err, reset)
	}
	removed, err := cl.SetRate(ctx, connect.NewRequest(&governorv1.SetRateRequest{NodeId: id, Resource: "vendor"}))
	if err != nil || len(removed.Msg.Node.Rates) != 0 {
		t.Fatalf("remove rate: %v %+v", err, removed)
	}
	if res, err := consume(0, 0); err != nil || res.Remaining != nil || res.ResetTime != nil {
		t.Fatalf("peek without caps: %v %+v", err, res)
	}
}

// TestScheduledConsumeOverJSON: a plain HTTP POST of JSON, as curl sends it,
// books a slot and reads the status and the wait.
func TestScheduledConsumeOverJSON(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	cl, _ := e.session(keyA)
	created, err := cl.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "job",
		Rates: map[string]*governorv1.Rate{"vendor": {Limit: 10, Period: durationpb.New(time.Minute), Burst: 1, Algorithm: governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET}}}}))
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string) map[string]any {
		var out map[string]any
		e.consumeJSON(t, body, &out)
		return out
	}
	job := `"resource":"vendor","nodeId":"` + strconv.FormatUint(created.Msg.Node.Id, 10) + `"`
	if got := post(`{` + job + `,"amount":"1"}`); got["status"] != "CONSUME_STATUS_OK" {
		t.Fatalf("first: %v", got)
	}
	if got := post(`{` + job + `,"amount":"1","maxWait":"10s"}`); got["status"] != "CONSUME_STATUS_SCHEDULED" || got["retryAfter"] != "6s" || got["remaining"] != "0" {
		t.Fatalf("scheduled: %v", got)
	}
	if got := post(`{` + job + `,"amount":"0"}`); got["remaining"] != "0" || got["resetTime"] == nil {
		t.Fatalf("peek: %v", got)
	}
}

// TestRateReadBack: every algorithm and calendar unit set over the API is
// described back as it was set.
func TestRateReadBack(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	cl, _ := e.session(keyA)
	rates := map[string]*governorv1.Rate{
		"leaky": {Limit: 10, Period: durationpb.New(time.Minute), Burst: 3, Algorithm: governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET},
		"token": {Limit: 10, Period: durationpb.New(time.Minute), Algorithm: governorv1.RateAlgorithm_RATE_ALGORITHM_TOKEN_BUCKET},
	}
	for u := governorv1.CalendarUnit_CALENDAR_UNIT_MINUTE; u <= governorv1.CalendarUnit_CALENDAR_UNIT_YEAR; u++ {
		rates["cal"+strconv.Itoa(int(u))] = &governorv1.Rate{Limit: 5, Calendar: u, Zone: "Europe/Paris", Algorithm: governorv1.RateAlgorithm_RATE_ALGORITHM_TOKEN_BUCKET}
	}
	res, err := cl.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "rated", Rates: rates}}))
	if err != nil {
		t.Fatal(err)
	}
	got := res.Msg.Node.Rates
	for name, want := range rates {
		r := got[name].GetRate()
		if r.GetAlgorithm() != want.Algorithm || r.GetCalendar() != want.Calendar || r.GetLimit() != want.Limit || r.GetZone() != want.Zone {
			t.Errorf("%s: described as %+v, set as %+v", name, r, want)
		}
	}
}

package explaintext

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

func TestLines(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(now.Add(d)) }
	x := &governorv1.ExplainResponse{
		NodeId: 4, Name: "db", Amount: 1, Now: timestamppb.New(now),
		Caps: []*governorv1.BindingCap{
			{Kind: governorv1.CapKind_CAP_KIND_LIMIT, NodeId: 4, NodeName: "job", Used: 1, Limit: 1, MoreHolders: 2,
				Holders: []*governorv1.SlotHolder{{LeaseId: 7, NodeId: 5, NodeName: "step", SessionId: 3, EndsBy: at(4 * time.Second), Basis: governorv1.EstimateBasis_ESTIMATE_BASIS_MAX_HOLD}}},
			{Kind: governorv1.CapKind_CAP_KIND_LIMIT, Shared: true},
		},
		Waiting:  &governorv1.WaitPlace{Waiters: 2, Place: 1, Weight: 3, Rotation: 2, Tenants: 5},
		Estimate: &governorv1.RunEstimate{At: at(4 * time.Second), Basis: []*governorv1.EstimateBound{{Kind: governorv1.EstimateBasis_ESTIMATE_BASIS_MAX_HOLD, NodeId: 4, LeaseId: 7}}},
	}
	want := `db on #4:
  limit on "job" #4: 1 of 1 slots held
    lease 7 on "step" #5 (session 3) must end by 12:00:04.000 UTC (in 4s) (max hold)
    and 2 more holder(s)
  a shared limit above your scope binds
  2 queued here; the first is number 1 in its tenant's queue; its tenant (weight 3) is number 2 of 5 in the fair rotation
  estimate: by 12:00:04.000 UTC (in 4s), resting on max hold of lease 7 on #4`
	if got := strings.Join(Lines(x), "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	free := &governorv1.ExplainResponse{NodeId: 4, Name: "tok", Amount: 3, Now: timestamppb.New(now), Estimate: &governorv1.RunEstimate{Now: true}}
	if got := Lines(free); len(got) != 1 || got[0] != "3 tok on #4: nothing binds; it can go ahead now" {
		t.Errorf("nothing binds: %q", got)
	}
	quota := &governorv1.ExplainResponse{NodeId: 4, Name: "tok", Now: timestamppb.New(now),
		Caps:     []*governorv1.BindingCap{{Kind: governorv1.CapKind_CAP_KIND_QUOTA, NodeId: 2, NodeName: "t", Used: 10, Limit: 10}},
		Estimate: &governorv1.RunEstimate{Unknown: "a quota binds"}}
	if got := strings.Join(Lines(quota), "\n"); !strings.Contains(got, `quota on "t" #2: 10 of 10 used`) || !strings.Contains(got, "estimate: unknown: a quota binds") {
		t.Errorf("a spent quota: %s", got)
	}
}

func TestNames(t *testing.T) {
	n := &governorv1.NodeInfo{
		Resources: map[string]*governorv1.ResourceUsage{"tok": {}, "db": {}},
		Classes:   map[string]*governorv1.ClassUsage{"db": {}, "gpu": {}},
	}
	if got := strings.Join(Names(n), " "); got != "db gpu tok" {
		t.Errorf("names %q, want db gpu tok", got)
	}
}

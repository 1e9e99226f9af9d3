package server

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

var wireStates = [...]governorv1.NodeState{
	engine.Active:           governorv1.NodeState_NODE_STATE_ACTIVE,
	engine.Done:             governorv1.NodeState_NODE_STATE_DONE,
	engine.Cancelled:        governorv1.NodeState_NODE_STATE_CANCELLED,
	engine.DeadlineExceeded: governorv1.NodeState_NODE_STATE_DEADLINE_EXCEEDED,
}

func wireState(st engine.State) governorv1.NodeState {
	if int(st) < len(wireStates) {
		return wireStates[st]
	}
	return governorv1.NodeState_NODE_STATE_UNSPECIFIED
}

var endedReasons = [...]string{
	engine.Done:             "closed",
	engine.Cancelled:        "cancelled",
	engine.DeadlineExceeded: "past its deadline",
}

// msgOwnerEnded is why a node ended that its owner's session took with it.
const msgOwnerEnded = "owner's session ended"

// endedReason says in words why a node in state st ended; "" while active.
// byOwner: the end of the session that owned it ended it.
func endedReason(st engine.State, byOwner bool) string {
	if byOwner {
		return msgOwnerEnded
	}
	if int(st) < len(endedReasons) {
		return endedReasons[st]
	}
	return ""
}

// stamp is a unix-nanosecond time on the wire; 0 is unset.
func stamp(ns int64) *timestamppb.Timestamp {
	if ns == 0 {
		return nil
	}
	return setStamp(&timestamppb.Timestamp{}, ns)
}

// setStamp sets ts to the unix-nanosecond time ns and returns it.
func setStamp(ts *timestamppb.Timestamp, ns int64) *timestamppb.Timestamp {
	t := time.Unix(0, ns)
	ts.Seconds, ts.Nanos = t.Unix(), int32(t.Nanosecond())
	return ts
}

// nodeInfo describes a node on the wire; tenant is its tenant's name.
func nodeInfo(inf engine.NodeInfo, tenant string) *governorv1.NodeInfo {
	out := &governorv1.NodeInfo{}
	fillNodeInfo(out, inf, tenant, stamp)
	return out
}

// fillNodeInfo is nodeInfo into out, with its times made by stamp.
func fillNodeInfo(out *governorv1.NodeInfo, inf engine.NodeInfo, tenant string, stamp func(int64) *timestamppb.Timestamp) {
	*out = governorv1.NodeInfo{
		Id: uint64(inf.ID), ParentId: uint64(inf.Parent), Name: inf.Name, Tenant: tenant,
		Depth: uint32(inf.Depth), State: wireState(inf.State),
		CreatedAt: stamp(inf.Created), EndedAt: stamp(inf.Ended), EndedReason: endedReason(inf.State, inf.OwnerEnded),
		Deadline: stamp(inf.Deadline), Weight: uint32(max(inf.Weight, 1)), Priority: inf.Priority,
		Defaults: wireDefaults(inf.Defaults), ChildrenCount: uint64(inf.Children),
		Rates: wireRateUsage(inf.Rates),
	}
	if len(inf.Quotas) > 0 {
		out.Resources = make(map[string]*governorv1.ResourceUsage, len(inf.Quotas))
		for r, q := range inf.Quotas {
			u := &governorv1.ResourceUsage{Used: q.Used}
			if q.Capped {
				u.Cap = &q.Cap
			}
			out.Resources[r] = u
		}
	}
	if len(inf.Limits) > 0 {
		out.Classes = make(map[string]*governorv1.ClassUsage, len(inf.Limits))
		for c, l := range inf.Limits {
			u := &governorv1.ClassUsage{Held: l.Held, Waiting: int64(l.Waiting)}
			if l.Limited {
				u.Limit = &l.Limit
			}
			out.Classes[c] = u
		}
	}
}

func wireDefaults(d engine.Defaults) *governorv1.Defaults {
	if len(d.Quotas) == 0 && len(d.Limits) == 0 && len(d.Rates) == 0 && d.Children == nil {
		return nil
	}
	out := &governorv1.Defaults{Quotas: d.Quotas, Limits: d.Limits, Rates: wireRates(d.Rates)}
	if d.Children != nil {
		out.Children = &governorv1.ChildDefaults{Quotas: d.Children.Quotas, Limits: d.Children.Limits, Rates: wireRates(d.Children.Rates)}
	}
	return out
}

var wireAlgorithmOf = [...]governorv1.RateAlgorithm{
	engine.TokenBucket: governorv1.RateAlgorithm_RATE_ALGORITHM_TOKEN_BUCKET,
	engine.LeakyBucket: governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET,
}

var wireCalendarOf = [...]governorv1.CalendarUnit{
	engine.Minute: governorv1.CalendarUnit_CALENDAR_UNIT_MINUTE,
	engine.Hour:   governorv1.CalendarUnit_CALENDAR_UNIT_HOUR,
	engine.Day:    governorv1.CalendarUnit_CALENDAR_UNIT_DAY,
	engine.Week:   governorv1.CalendarUnit_CALENDAR_UNIT_WEEK,
	engine.Month:  governorv1.CalendarUnit_CALENDAR_UNIT_MONTH,
	engine.Year:   governorv1.CalendarUnit_CALENDAR_UNIT_YEAR,
}

func wireRate(r engine.Rate) *governorv1.Rate {
	out := &governorv1.Rate{Limit: r.Limit, Burst: r.Burst, Zone: r.Zone}
	if r.Period != 0 {
		out.Period = durationpb.New(r.Period)
	}
	if int(r.Algorithm) < len(wireAlgorithmOf) {
		out.Algorithm = wireAlgorithmOf[r.Algorithm]
	}
	if int(r.Calendar) < len(wireCalendarOf) {
		out.Calendar = wireCalendarOf[r.Calendar]
	}
	return out
}

func wireRates(m map[string]engine.Rate) map[string]*governorv1.Rate {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*governorv1.Rate, len(m))
	for k, r := range m {
		out[k] = wireRate(r)
	}
	return out
}

func wireRateUsage(m map[string]engine.RateInfo) map[string]*governorv1.RateUsage {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*governorv1.RateUsage, len(m))
	for k, r := range m {
		out[k] = &governorv1.RateUsage{Rate: wireRate(r.Rate), Remaining: r.Remaining, ResetTime: stamp(r.Reset), InDebt: r.Debt}
	}
	return out
}

func wireLease(l engine.LeaseInfo) *governorv1.Lease {
	return &governorv1.Lease{
		Id: uint64(l.ID), NodeId: uint64(l.Node), Class: l.Class, SessionId: uint64(l.Session),
		GrantedAt: stamp(l.Granted), HoldUntil: stamp(l.Until),
	}
}

// nodeInfo describes a node on the wire with its tenant's name.
func (s *Server) nodeInfo(inf engine.NodeInfo) *governorv1.NodeInfo {
	return nodeInfo(inf, s.tenantName(inf))
}

// tenantName is the name of inf's tenant; "" for the root.
func (s *Server) tenantName(inf engine.NodeInfo) string {
	if inf.Tenant == engine.RootID {
		return ""
	}
	return s.hub.name(inf.Tenant)
}

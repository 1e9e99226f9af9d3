// Package explaintext words an Explain answer for people: the lines the CLI
// prints and the terminal UI shows. Times are given both as clock times and
// as waits from the instant the explanation holds at.
package explaintext

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Lines describes x: what binds, where the waiters stand, and the estimate.
// Lines after the first are indented by two spaces.
func Lines(x *governorv1.ExplainResponse) []string {
	now := x.GetNow().AsTime()
	head := fmt.Sprintf("%s on #%d", x.GetName(), x.GetNodeId())
	if x.GetAmount() > 1 {
		head = fmt.Sprintf("%d %s on #%d", x.GetAmount(), x.GetName(), x.GetNodeId())
	}
	if len(x.GetCaps()) == 0 && x.GetWaiting() == nil {
		return []string{head + ": nothing binds; it can go ahead now"}
	}
	out := []string{head + ":"}
	for _, b := range x.GetCaps() {
		out = append(out, "  "+capLine(b, now))
		for _, h := range b.GetHolders() {
			out = append(out, "    "+holderLine(h, now))
		}
		if n := b.GetMoreHolders(); n > 0 {
			out = append(out, fmt.Sprintf("    and %d more holder(s)", n))
		}
	}
	if w := x.GetWaiting(); w != nil {
		out = append(out, "  "+waitLine(w))
	}
	return append(out, "  "+estimateLine(x.GetEstimate(), now))
}

var kinds = map[governorv1.CapKind]string{
	governorv1.CapKind_CAP_KIND_QUOTA: "quota",
	governorv1.CapKind_CAP_KIND_RATE:  "rate cap",
	governorv1.CapKind_CAP_KIND_LIMIT: "limit",
}

func capLine(b *governorv1.BindingCap, now time.Time) string {
	kind := kinds[b.GetKind()]
	if b.GetShared() {
		return fmt.Sprintf("a shared %s above your scope binds", kind)
	}
	at := fmt.Sprintf("%s on %q #%d", kind, b.GetNodeName(), b.GetNodeId())
	switch b.GetKind() {
	case governorv1.CapKind_CAP_KIND_QUOTA:
		return fmt.Sprintf("%s: %d of %d used", at, b.GetUsed(), b.GetLimit())
	case governorv1.CapKind_CAP_KIND_RATE:
		if b.GetNever() {
			return fmt.Sprintf("%s: limit %d, never admits the amount at once", at, b.GetLimit())
		}
		return fmt.Sprintf("%s: %d of %d used, admits it again at %s", at, b.GetUsed(), b.GetLimit(), when(b.GetRefill(), now))
	}
	return fmt.Sprintf("%s: %d of %d slots held", at, b.GetUsed(), b.GetLimit())
}

func holderLine(h *governorv1.SlotHolder, now time.Time) string {
	s := fmt.Sprintf("lease %d on %q #%d (session %d)", h.GetLeaseId(), h.GetNodeName(), h.GetNodeId(), h.GetSessionId())
	if h.GetEndsBy() == nil {
		return s + ", nothing bounds its end"
	}
	return fmt.Sprintf("%s must end by %s (%s)", s, when(h.GetEndsBy(), now), Basis(h.GetBasis()))
}

func waitLine(w *governorv1.WaitPlace) string {
	s := fmt.Sprintf("%d queued here; the first is number %d in its tenant's queue", w.GetWaiters(), w.GetPlace())
	if w.GetParked() {
		s += ", parked behind a full limit"
		if w.GetParkedAt() != 0 {
			s += fmt.Sprintf(" on #%d", w.GetParkedAt())
		}
	}
	if w.GetRotation() == 0 {
		return s + fmt.Sprintf("; its tenant (weight %d) is out of the fair rotation for now", w.GetWeight())
	}
	return s + fmt.Sprintf("; its tenant (weight %d) is number %d of %d in the fair rotation", w.GetWeight(), w.GetRotation(), w.GetTenants())
}

func estimateLine(e *governorv1.RunEstimate, now time.Time) string {
	switch {
	case e.GetNow():
		return "estimate: now"
	case e.GetAt() == nil:
		return "estimate: unknown: " + e.GetUnknown()
	}
	s := "estimate: by " + when(e.GetAt(), now) + ", resting on"
	for i, b := range e.GetBasis() {
		if i > 0 {
			s += ","
		}
		s += " " + Basis(b.GetKind())
		if b.GetLeaseId() != 0 {
			s += fmt.Sprintf(" of lease %d", b.GetLeaseId())
		}
		s += fmt.Sprintf(" on #%d", b.GetNodeId())
	}
	return s
}

var bases = map[governorv1.EstimateBasis]string{
	governorv1.EstimateBasis_ESTIMATE_BASIS_MAX_HOLD:       "max hold",
	governorv1.EstimateBasis_ESTIMATE_BASIS_DEADLINE:       "deadline",
	governorv1.EstimateBasis_ESTIMATE_BASIS_SESSION_EXPIRY: "session expiry",
	governorv1.EstimateBasis_ESTIMATE_BASIS_RATE_REFILL:    "rate refill",
}

// Basis names what an estimate rests on, in words.
func Basis(b governorv1.EstimateBasis) string {
	if s, ok := bases[b]; ok {
		return s
	}
	return "nothing"
}

// when is a time as a clock time and a wait from now.
func when(ts *timestamppb.Timestamp, now time.Time) string {
	t := ts.AsTime()
	return fmt.Sprintf("%s UTC (in %s)", t.UTC().Format("15:04:05.000"), t.Sub(now).Round(time.Millisecond))
}

// Names lists, sorted, every resource and class node n carries: what
// explaining the whole node asks about.
func Names(n *governorv1.NodeInfo) []string {
	names := slices.Collect(maps.Keys(n.GetResources()))
	for c := range n.GetClasses() {
		if !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	slices.Sort(names)
	return names
}

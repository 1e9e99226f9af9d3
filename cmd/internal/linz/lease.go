package linz

import (
	"fmt"
	"maps"
	"slices"

	"github.com/anishathalye/porcupine"
)

// LeaseKind says what a LeaseOp does.
type LeaseKind int

const (
	// Acquire grants a new lease when fewer than the pool's limit are held,
	// and is denied when the pool is full.
	Acquire LeaseKind = iota
	// Release gives back lease ID; it is OK when the lease was held.
	Release
	// Validate tells whether lease ID is held.
	Validate
)

// LeaseOp is the input of a call to a lease pool.
type LeaseOp struct {
	Kind LeaseKind
	ID   string // the lease of a Release or Validate
}

// LeaseResult is the output of a call to a lease pool: for an Acquire, OK
// and the ID granted; for a Release or Validate, OK says the lease was held.
type LeaseResult struct {
	OK bool
	ID string
}

// leaseState is what the pool holds. It is never changed once made.
type leaseState struct {
	held    map[string]bool // leases granted and not released
	hidden  int             // leases granted to calls whose outcome is unknown
	granted map[string]bool // every lease ever granted
}

// LeasePool is the model of a pool of limit leases: an Acquire is granted an
// id never granted before while fewer than limit are held, and denied when
// limit are held; a Release or Validate is OK exactly when the lease is held.
// An Acquire with an unknown outcome may hold a place in the pool under an
// id nobody learned.
func LeasePool(limit int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return leaseState{} },
		Step: func(state, input, output any) (bool, any) {
			s, op := state.(leaseState), input.(LeaseOp)
			if op.Kind == Acquire {
				return acquire(s, output, limit)
			}
			held := s.held[op.ID]
			if !isUnknown(output) && output.(LeaseResult).OK != held {
				return false, s
			}
			if op.Kind == Release && held {
				s.held = without(s.held, op.ID)
			}
			return true, s
		},
		Equal: func(a, b any) bool {
			x, y := a.(leaseState), b.(leaseState)
			return x.hidden == y.hidden && maps.Equal(x.held, y.held) && maps.Equal(x.granted, y.granted)
		},
		DescribeOperation: describeLease,
		DescribeState: func(state any) string {
			s := state.(leaseState)
			return fmt.Sprintf("held %v and %d unknown", slices.Sorted(maps.Keys(s.held)), s.hidden)
		},
	}
}

// acquire steps an Acquire.
func acquire(s leaseState, output any, limit int) (bool, any) {
	full := len(s.held)+s.hidden >= limit
	if isUnknown(output) {
		if !full {
			s.hidden++
		}
		return true, s
	}
	r := output.(LeaseResult)
	if !r.OK {
		return full, s
	}
	if full || s.granted[r.ID] {
		return false, s
	}
	s.held = with(s.held, r.ID)
	s.granted = with(s.granted, r.ID)
	return true, s
}

func with(set map[string]bool, id string) map[string]bool {
	out := maps.Clone(set)
	if out == nil {
		out = make(map[string]bool)
	}
	out[id] = true
	return out
}

func without(set map[string]bool, id string) map[string]bool {
	out := maps.Clone(set)
	delete(out, id)
	return out
}

func describeLease(input, output any) string {
	op := input.(LeaseOp)
	name := [...]string{Acquire: "acquire()", Release: "release(%s)", Validate: "validate(%s)"}[op.Kind]
	if op.Kind != Acquire {
		name = fmt.Sprintf(name, op.ID)
	}
	switch {
	case isUnknown(output):
		return name + " → ?"
	case op.Kind == Acquire && output.(LeaseResult).OK:
		return name + " → " + output.(LeaseResult).ID
	case op.Kind == Acquire:
		return name + " → denied"
	default:
		return fmt.Sprintf("%s → %t", name, output.(LeaseResult).OK)
	}
}

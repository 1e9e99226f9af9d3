package server

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// What a request may carry. The engine enforces the same limits; checking
// them here first lets an error name the request's field.
const (
	maxNameLen    = 256 // bytes of a node's name
	maxKeyLen     = 64  // bytes of a resource or class name
	maxCaps       = 64  // entries of a quota or limit map
	maxWeight     = 1000
	maxPriority   = 1000
	maxRequestLen = 256            // bytes of a request id
	maxReasonLen  = 1024           // bytes of a cancel reason
	maxClientLen  = 256            // bytes of a client name
	maxWait       = 24 * time.Hour // a consume's max_wait; the server's own ceiling is lower
)

const keyRule = "must be 1 to 64 characters: a lowercase letter, then lowercase letters, digits, '_', '.' or '-'"

func checkKey(field, k string) error {
	if k == "" || len(k) > maxKeyLen {
		return badField(field, keyRule)
	}
	for i := range len(k) {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-')) {
			return badField(field, keyRule)
		}
	}
	return nil
}

func checkName(field, name string) error {
	if name == "" || len(name) > maxNameLen || !utf8.ValidString(name) {
		return badField(field, fmt.Sprintf("must be 1 to %d bytes of UTF-8", maxNameLen))
	}
	return nil
}

func checkRequestID(id string) error {
	if len(id) > maxRequestLen {
		return badField("request_id", fmt.Sprintf("must be at most %d bytes, or empty for none", maxRequestLen))
	}
	return nil
}

func checkNode(field string, id uint64) error {
	if id > math.MaxInt64 {
		return badField(field, "must be a node id, or 0 for your scope node")
	}
	return nil
}

func checkLease(id uint64) error {
	if id == 0 || id > math.MaxInt64 {
		return badField("lease_id", "must be the id of a lease, as Acquire returned it")
	}
	return nil
}

func checkAmount(field string, n int64) error {
	if n < 1 {
		return badField(field, fmt.Sprintf("must be 1 or more, got %d", n))
	}
	return nil
}

// checkCaps checks a quota or limit map, in key order so that the same
// request always names the same field.
func checkCaps(field string, m map[string]int64) (map[string]int64, error) {
	if len(m) > maxCaps {
		return nil, badField(field, fmt.Sprintf("must have at most %d entries, got %d", maxCaps, len(m)))
	}
	if len(m) == 0 {
		return nil, nil
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkKey(field+" key", k); err != nil {
			return nil, err
		}
		if m[k] < 0 {
			return nil, badField(field+"."+k, fmt.Sprintf("must be 0 or more, got %d", m[k]))
		}
	}
	return maps.Clone(m), nil
}

// checkSpec turns a spec into the engine's; name is the node's name, which
// EnsureNode takes outside the spec.
func checkSpec(field string, sp *governorv1.NodeSpec, name string, nameField string) (engine.Spec, error) {
	var out engine.Spec
	var err error
	if err = checkName(nameField, name); err != nil {
		return out, err
	}
	out.Name = name
	if sp == nil {
		return out, nil
	}
	out.Detached = sp.Detached
	if out.Quotas, err = checkCaps(field+".quotas", sp.Quotas); err != nil {
		return out, err
	}
	if out.Limits, err = checkCaps(field+".limits", sp.Limits); err != nil {
		return out, err
	}
	if out.Rates, err = checkRates(field+".rates", sp.Rates); err != nil {
		return out, err
	}
	if out.Deadline, err = checkTime(field+".deadline", sp.Deadline); err != nil {
		return out, err
	}
	if sp.Weight > maxWeight {
		return out, badField(field+".weight", fmt.Sprintf("must be between 1 and %d, or 0 for 1; got %d", maxWeight, sp.Weight))
	}
	if sp.Priority < -maxPriority || sp.Priority > maxPriority {
		return out, badField(field+".priority", fmt.Sprintf("must be between %d and %d, got %d", -maxPriority, maxPriority, sp.Priority))
	}
	out.Weight, out.Priority = int32(sp.Weight), sp.Priority
	if sp.Retention != nil {
		if sp.Retention.CheckValid() != nil || sp.Retention.AsDuration() < 0 || sp.Retention.AsDuration() > engine.MaxRetention {
			return out, badField(field+".retention", "must be a duration from 0 to 366 days (8784h), or unset for governord's retention.nodes")
		}
		out.Retention = sp.Retention.AsDuration()
	}
	return out, nil
}

// latestTime is the last instant a deadline may name: unix nanoseconds fit
// an int64 until 2262.
var latestTime = time.Unix(0, math.MaxInt64)

// checkTime turns an optional timestamp into unix nanoseconds, 0 when unset.
func checkTime(field string, ts *timestamppb.Timestamp) (int64, error) {
	if ts == nil {
		return 0, nil
	}
	t := ts.AsTime()
	if ts.CheckValid() != nil || !t.After(time.Unix(0, 0)) || !t.Before(latestTime) {
		return 0, badField(field, "must be a time after 1970 and before 2262, or unset for none")
	}
	return t.UnixNano(), nil
}

// checkDuration turns an optional duration into a time.Duration; unset is 0.
// A duration must lie in [min, max]; the words say what is allowed.
func checkDuration(field string, d *durationpb.Duration, lo, hi time.Duration, allowed string) (time.Duration, error) {
	if d == nil {
		return 0, nil
	}
	v := d.AsDuration()
	if d.CheckValid() != nil || v < lo || v > hi {
		return 0, badField(field, allowed)
	}
	return v, nil
}

// checkDefaults turns defaults into the engine's; nil removes them all.
func checkDefaults(d *governorv1.Defaults) (engine.Defaults, error) {
	var out engine.Defaults
	var err error
	if d == nil {
		return out, nil
	}
	if out.Quotas, err = checkCaps("defaults.quotas", d.Quotas); err != nil {
		return out, err
	}
	if out.Limits, err = checkCaps("defaults.limits", d.Limits); err != nil {
		return out, err
	}
	if out.Rates, err = checkRates("defaults.rates", d.Rates); err != nil {
		return out, err
	}
	if d.Children == nil {
		return out, nil
	}
	out.Children = &engine.Caps{}
	if out.Children.Quotas, err = checkCaps("defaults.children.quotas", d.Children.Quotas); err != nil {
		return out, err
	}
	if out.Children.Limits, err = checkCaps("defaults.children.limits", d.Children.Limits); err != nil {
		return out, err
	}
	out.Children.Rates, err = checkRates("defaults.children.rates", d.Children.Rates)
	return out, err
}

// checkValue checks an optional cap value: absent removes the cap.
func checkValue(v *int64) (*int64, error) {
	if v != nil && *v < 0 {
		return nil, badField("value", fmt.Sprintf("must be 0 or more, or absent to remove the cap; got %d", *v))
	}
	return v, nil
}

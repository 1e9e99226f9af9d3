package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// DefaultMaxScheduleWait is the longest wait a consume with max_wait is
// booked for when the file says nothing.
const DefaultMaxScheduleWait = 5 * time.Minute

// Rate is a rate cap: limit units per period that refill with time, or per
// calendar unit in a time zone ("500 a day in Europe/Paris").
type Rate struct {
	// Limit is the units per period, 1 to 1,000,000,000.
	Limit int64 `yaml:"limit"`
	// Per is the period, 1ms to 366 days; leave it out with a calendar.
	Per time.Duration `yaml:"per"`
	// Burst is a leaky bucket's capacity; 0 means the limit.
	Burst int64 `yaml:"burst"`
	// Algorithm is token_bucket (the default) or leaky_bucket.
	Algorithm string `yaml:"algorithm"`
	// Calendar ends a token bucket's window at the end of the current
	// minute, hour, day, week (Monday), month or year instead of after Per.
	Calendar string `yaml:"calendar"`
	// Zone is the calendar's IANA time zone, such as Europe/Paris; empty is
	// UTC.
	Zone string `yaml:"zone"`
}

// Engine returns the rate cap as the engine takes it, or a Problem whose
// Path is the field, relative to the rate, and whose Message says what it
// allows.
func (r Rate) Engine() (engine.Rate, error) {
	out := engine.Rate{Limit: r.Limit, Period: r.Per, Burst: r.Burst, Zone: r.Zone}
	if r.Algorithm != "" {
		if err := out.Algorithm.UnmarshalText([]byte(r.Algorithm)); err != nil {
			return out, Problem{Path: "algorithm", Message: fmt.Sprintf("must be token_bucket or leaky_bucket, got %q", r.Algorithm)}
		}
	}
	if r.Calendar != "" {
		if err := out.Calendar.UnmarshalText([]byte(r.Calendar)); err != nil {
			return out, Problem{Path: "calendar", Message: fmt.Sprintf("must be minute, hour, day, week, month or year, got %q", r.Calendar)}
		}
	}
	if err := engine.CheckRate(&out); err != nil {
		var inv *engine.InvalidError
		if !errors.As(err, &inv) {
			return out, err
		}
		field := strings.TrimPrefix(strings.TrimPrefix(inv.Field, "rate"), ".")
		if field == "period" {
			field = "per"
		}
		return out, Problem{Path: field, Message: strings.ReplaceAll(inv.Problem, "period", "per")}
	}
	return out, nil
}

// EngineRates converts a map of rate caps; nil when it is empty.
func EngineRates(m map[string]Rate) (map[string]engine.Rate, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]engine.Rate, len(m))
	for _, k := range sortedKeys(m) {
		er, err := m[k].Engine()
		if err != nil {
			return nil, fmt.Errorf("rate %s: %w", k, err)
		}
		out[k] = er
	}
	return out, nil
}

// checkRates checks a map of rate caps under path.
func checkRates(k *checker, path string, m map[string]Rate) {
	for _, name := range sortedKeys(m) {
		p := path + "." + name
		if !checkName(k, p, name, "resource") {
			continue
		}
		if _, err := m[name].Engine(); err != nil {
			var rp Problem
			if errors.As(err, &rp) {
				k.add(p+"."+rp.Path, "%s", rp.Message)
			} else {
				k.add(p, "%v", err)
			}
		}
	}
}

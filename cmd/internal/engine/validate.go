package engine

import (
	"time"
	"unicode/utf8"
)

// Limits on what a call may carry.
const (
	maxNameLen     = 256 // bytes of a node's name
	maxKeyLen      = 64  // bytes of a resource or class name
	maxWeight      = 1000
	maxPriority    = 1000
	maxRequestLen  = 256
	maxCapsPerNode = 64
)

// validKey checks a resource or class name: a lowercase letter, then
// lowercase letters, digits, '_', '.' or '-'.
func validKey(field, k string) error {
	if k == "" || len(k) > maxKeyLen {
		return invalid(field, "must be 1 to %d characters, got %d", maxKeyLen, len(k))
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		ok := c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-')
		if !ok {
			return invalid(field, "%q must start with a lowercase letter and hold only a-z, 0-9, '_', '.' and '-'", k)
		}
	}
	return nil
}

func validCaps(field string, m map[string]int64) error {
	if len(m) > maxCapsPerNode {
		return invalid(field, "at most %d entries, got %d", maxCapsPerNode, len(m))
	}
	for k, v := range m {
		if err := validKey(field+" key", k); err != nil {
			return err
		}
		if v < 0 {
			return invalid(field+"."+k, "must be 0 or more, got %d", v)
		}
	}
	return nil
}

func validName(n string) error {
	if n == "" || len(n) > maxNameLen || !utf8.ValidString(n) {
		return invalid("name", "must be 1 to %d bytes of UTF-8", maxNameLen)
	}
	return nil
}

func validSpec(s *Spec) error {
	if err := validName(s.Name); err != nil {
		return err
	}
	if err := validCaps("quotas", s.Quotas); err != nil {
		return err
	}
	if err := validCaps("limits", s.Limits); err != nil {
		return err
	}
	if err := validRates("rates", s.Rates); err != nil {
		return err
	}
	if s.Deadline < 0 {
		return invalid("deadline", "must not be negative")
	}
	if s.Weight < 0 || s.Weight > maxWeight {
		return invalid("weight", "must be between 1 and %d (0 means 1), got %d", maxWeight, s.Weight)
	}
	if s.Priority < -maxPriority || s.Priority > maxPriority {
		return invalid("priority", "must be between %d and %d, got %d", -maxPriority, maxPriority, s.Priority)
	}
	if s.Retention < 0 || s.Retention > MaxRetention {
		return invalid("retention", "must be between 0 (the node_retention setting) and %s, got %s", MaxRetention, s.Retention)
	}
	return validKeyedSpec(s)
}

func validDefaults(d *Defaults) error {
	if err := validCaps("defaults.quotas", d.Quotas); err != nil {
		return err
	}
	if err := validCaps("defaults.limits", d.Limits); err != nil {
		return err
	}
	if err := validRates("defaults.rates", d.Rates); err != nil {
		return err
	}
	if d.Children == nil {
		return nil
	}
	if err := validCaps("defaults.children.quotas", d.Children.Quotas); err != nil {
		return err
	}
	if err := validCaps("defaults.children.limits", d.Children.Limits); err != nil {
		return err
	}
	return validRates("defaults.children.rates", d.Children.Rates)
}

func validRequest(c *Call) error {
	if len(c.Request) > maxRequestLen {
		return invalid("request_id", "must be at most %d bytes, got %d", maxRequestLen, len(c.Request))
	}
	return nil
}

// validSettings checks the engine's knobs.
func validSettings(s *Settings) error {
	if err := validSpan("tombstone_ttl", s.TombstoneTTL, "forget at once"); err != nil {
		return err
	}
	if err := validSpan("node_retention", s.NodeRetention, "remove at once"); err != nil {
		return err
	}
	if s.MaxScheduleWait < 0 || s.MaxScheduleWait > maxScheduleWait {
		return invalid("max_schedule_wait", "must be between 0 (no scheduled admission) and %s, got %s", time.Duration(maxScheduleWait), s.MaxScheduleWait)
	}
	return validSpan("key_idle", s.KeyIdle, "keep every key")
}

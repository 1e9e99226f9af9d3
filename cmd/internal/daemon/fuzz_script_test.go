package daemon

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// script reads a fuzzer's bytes as the arguments of API calls. Each number
// is a byte that picks one of the extremes or, past them, the next eight
// bytes as they are; an exhausted script reads zeros.
type script struct {
	b []byte
}

// extremes are the numbers a careless or hostile caller sends first.
var extremes = []int64{
	0, 1, -1, 2, 10, 1_000, 1_000_000_000, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1,
	math.MaxInt32, math.MinInt32, 1 << 62, 315576000000, 86400, 3600,
}

// keys are the resource, class and name strings a script picks from; the
// last ones are invalid on purpose.
var keys = []string{"http", "tokens", "db", "gpu", "a", "", "HTTP", "x/y"}

func (s *script) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *script) flag() bool { return s.byte()&1 == 1 }

func (s *script) num() int64 {
	c := int(s.byte())
	if c < len(extremes) {
		return extremes[c]
	}
	if c < 128 {
		return int64(c - len(extremes))
	}
	var buf [8]byte
	n := copy(buf[:], s.b)
	s.b = s.b[n:]
	return int64(binary.LittleEndian.Uint64(buf[:]))
}

func (s *script) key() string { return keys[int(s.byte())%len(keys)] }

// dur is unset, or any seconds and nanoseconds, valid or not.
func (s *script) dur() *durationpb.Duration {
	if !s.flag() {
		return nil
	}
	return &durationpb.Duration{Seconds: s.num(), Nanos: int32(s.num())}
}

// stamp is unset, or any seconds and nanoseconds since 1970.
func (s *script) stamp() *timestamppb.Timestamp {
	if !s.flag() {
		return nil
	}
	return &timestamppb.Timestamp{Seconds: s.num(), Nanos: int32(s.num())}
}

// caps is up to three entries of any values.
func (s *script) caps() map[string]int64 {
	n := int(s.byte() % 4)
	if n == 0 {
		return nil
	}
	m := make(map[string]int64, n)
	for range n {
		m[s.key()] = s.num()
	}
	return m
}

func (s *script) rate() *governorv1.Rate {
	return &governorv1.Rate{
		Limit: s.num(), Period: s.dur(), Burst: s.num(),
		Algorithm: governorv1.RateAlgorithm(s.byte() % 4), Calendar: governorv1.CalendarUnit(s.byte() % 8),
	}
}

func (s *script) rates() map[string]*governorv1.Rate {
	n := int(s.byte() % 3)
	if n == 0 {
		return nil
	}
	m := make(map[string]*governorv1.Rate, n)
	for range n {
		m[s.key()] = s.rate()
	}
	return m
}

func (s *script) spec() *governorv1.NodeSpec {
	return &governorv1.NodeSpec{
		Name: s.key(), Quotas: s.caps(), Limits: s.caps(), Deadline: s.stamp(),
		Weight: uint32(s.num()), Priority: int32(s.num()), Rates: s.rates(), Retention: s.dur(),
	}
}

func (s *script) defaults() *governorv1.Defaults {
	d := &governorv1.Defaults{Quotas: s.caps(), Limits: s.caps(), Rates: s.rates()}
	if s.flag() {
		d.Children = &governorv1.ChildDefaults{Quotas: s.caps(), Limits: s.caps(), Rates: s.rates()}
	}
	return d
}

// optional is unset or a number.
func (s *script) optional() *int64 {
	if !s.flag() {
		return nil
	}
	v := s.num()
	return &v
}

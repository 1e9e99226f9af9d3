package linz

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// QuotaKind says what a QuotaOp does.
type QuotaKind int

const (
	// Consume charges N to the quota of Key when the charge fits under the
	// cap, and changes nothing when it does not.
	Consume QuotaKind = iota
	// Read returns the usage of Key.
	Read
)

// QuotaOp is the input of a call to a quota.
type QuotaOp struct {
	Kind QuotaKind
	Key  string
	N    int64 // the charge of a Consume; positive
	// RequestID names the request of a Consume for the Idempotent model:
	// calls with one id are one request, applied at most once. Quota
	// ignores it.
	RequestID string
}

// QuotaResult is the output of a call to a quota: OK for a Consume (charged
// or denied), Usage for a Read.
type QuotaResult struct {
	OK    bool
	Usage int64
}

// Quota is the model of one cap per key: a Consume is charged when usage
// plus N stays at or under limit, and a denied Consume changes nothing; a
// Read returns the usage. Keys are independent and checked apart.
func Quota(limit int64) porcupine.Model {
	return quotaModel(limit, false)
}

// Idempotent is Quota with request ids: the first call with a RequestID is
// applied, and every later call with the same id changes nothing and must
// return the answer of the first, as a retry after an unknown outcome does.
// A request id belongs to one key.
func Idempotent(limit int64) porcupine.Model {
	return quotaModel(limit, true)
}

// quotaState is the state of one key: its usage and, for Idempotent, the
// answer given to each request id. It is never changed once made.
type quotaState struct {
	usage   int64
	answers map[string]bool
}

func quotaModel(limit int64, remember bool) porcupine.Model {
	partition := partitionBy(func(in any) string { return in.(QuotaOp).Key })
	if remember {
		partition = forgetUnrepeated(partition)
	}
	return porcupine.Model{
		Partition: partition,
		Init:      func() any { return quotaState{} },
		Step: func(state, input, output any) (bool, any) {
			s, op := state.(quotaState), input.(QuotaOp)
			if op.Kind == Read {
				return isUnknown(output) || output.(QuotaResult).Usage == s.usage, s
			}
			if first, seen := s.answers[op.RequestID]; remember && op.RequestID != "" && seen {
				return isUnknown(output) || output.(QuotaResult).OK == first, s
			}
			next, ok := charge(s, op, limit, remember)
			return isUnknown(output) || output.(QuotaResult).OK == ok, next
		},
		Equal: func(a, b any) bool {
			x, y := a.(quotaState), b.(quotaState)
			return x.usage == y.usage && maps.Equal(x.answers, y.answers)
		},
		DescribeOperation: describeQuota,
		DescribeState: func(state any) string {
			s := state.(quotaState)
			return fmt.Sprintf("usage %d, %d request ids", s.usage, len(s.answers))
		},
	}
}

// charge applies a new Consume: charged when it fits, with checked
// arithmetic, and its answer remembered when the model remembers.
func charge(s quotaState, op QuotaOp, limit int64, remember bool) (quotaState, bool) {
	ok := op.N > 0 && s.usage <= limit-op.N
	next := s
	if ok {
		next.usage += op.N
	}
	if remember && op.RequestID != "" {
		next.answers = maps.Clone(s.answers)
		if next.answers == nil {
			next.answers = make(map[string]bool)
		}
		next.answers[op.RequestID] = ok
	}
	return next, ok
}

func describeQuota(input, output any) string {
	op := input.(QuotaOp)
	var b strings.Builder
	if op.Kind == Read {
		fmt.Fprintf(&b, "read(%s)", op.Key)
	} else {
		fmt.Fprintf(&b, "consume(%s, %d", op.Key, op.N)
		if op.RequestID != "" {
			fmt.Fprintf(&b, ", %s", op.RequestID)
		}
		b.WriteString(")")
	}
	switch {
	case isUnknown(output):
		b.WriteString(" → ?")
	case op.Kind == Read:
		fmt.Fprintf(&b, " → %d", output.(QuotaResult).Usage)
	case output.(QuotaResult).OK:
		b.WriteString(" → ok")
	default:
		b.WriteString(" → denied")
	}
	return b.String()
}

// partitionBy splits a history into one part per key, sorted by key, so
// that the checker searches each part alone.
func partitionBy(key func(input any) string) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(history []porcupine.Operation) [][]porcupine.Operation {
		parts := make(map[string][]porcupine.Operation)
		for _, op := range history {
			k := key(op.Input)
			parts[k] = append(parts[k], op)
		}
		keys := make([]string, 0, len(parts))
		for k := range parts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, parts[k])
		}
		return out
	}
}

// forgetUnrepeated wraps a partition function so that it also drops the
// request id of every call whose id no other call of its part carries. Such
// an id is never looked up again, so remembering its answer changes no
// verdict; dropping it keeps the state the checker copies small.
func forgetUnrepeated(partition func([]porcupine.Operation) [][]porcupine.Operation) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(history []porcupine.Operation) [][]porcupine.Operation {
		parts := partition(history)
		for _, part := range parts {
			calls := make(map[string]int)
			for _, op := range part {
				calls[op.Input.(QuotaOp).RequestID]++
			}
			for i, op := range part {
				if in := op.Input.(QuotaOp); in.RequestID != "" && calls[in.RequestID] == 1 {
					in.RequestID = ""
					part[i].Input = in
				}
			}
		}
		return parts
	}
}

package engine

import "iter"

// resIndexAt is how many resources a node holds in a list alone; past it a
// map finds them. Most nodes hold one or two, and a map of even one entry
// costs about ten times a list's.
const resIndexAt = 8

// resSet is a node's resources by name. An entry is never replaced or
// deleted, so a *resState taken from it stays the node's. The zero value is
// empty.
type resSet struct {
	list  []resEntry           // in the order the resources came
	index map[string]*resState // the same entries, once list is longer than resIndexAt; nil before
}

type resEntry struct {
	name string
	rs   *resState
}

// get returns resource r's state, nil if the set has none.
func (s *resSet) get(r string) *resState {
	if s.index != nil {
		return s.index[r]
	}
	for i := range s.list {
		if s.list[i].name == r {
			return s.list[i].rs
		}
	}
	return nil
}

// add puts rs in as resource r, which the set must not hold.
func (s *resSet) add(r string, rs *resState) {
	s.list = append(s.list, resEntry{r, rs})
	switch {
	case s.index != nil:
		s.index[r] = rs
	case len(s.list) > resIndexAt:
		s.index = make(map[string]*resState, len(s.list))
		for _, en := range s.list {
			s.index[en.name] = en.rs
		}
	}
}

// len returns how many resources the set holds.
func (s *resSet) len() int { return len(s.list) }

// all yields every resource and its state, in the order they came.
func (s *resSet) all() iter.Seq2[string, *resState] {
	return func(yield func(string, *resState) bool) {
		for _, en := range s.list {
			if !yield(en.name, en.rs) {
				return
			}
		}
	}
}

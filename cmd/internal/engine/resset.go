package engine

import "iter"

// resIndexAt is how many resources a node holds in a list alone; past it a
// map finds them. Most nodes hold one or two, and a map of even one entry
// costs about ten times a list's.
const resIndexAt = 8

// resSet is a node's resources by name. An entry is never changed, moved
// within the list or deleted once added, so a *resState taken from it stays
// the node's, and so does a *resEntry, even one into the array the list had
// before it grew. The zero value is empty.
type resSet struct {
	list  []resEntry       // in the order the resources came
	index map[string]int32 // each entry's place in list, once list is longer than resIndexAt; nil before
}

type resEntry struct {
	name string
	rs   *resState
}

// get returns resource r's state, nil if the set has none.
func (s *resSet) get(r string) *resState {
	if i := s.find(r); i >= 0 {
		return s.list[i].rs
	}
	return nil
}

// find returns resource r's place in list, -1 if the set has none.
func (s *resSet) find(r string) int {
	if s.index != nil {
		if i, ok := s.index[r]; ok {
			return int(i)
		}
		return -1
	}
	for i := range s.list {
		if s.list[i].name == r {
			return i
		}
	}
	return -1
}

// add puts rs in as resource r, which the set must not hold.
func (s *resSet) add(r string, rs *resState) {
	s.list = append(s.list, resEntry{r, rs})
	switch {
	case s.index != nil:
		s.index[r] = int32(len(s.list) - 1)
	case len(s.list) > resIndexAt:
		s.index = make(map[string]int32, len(s.list))
		for i, en := range s.list {
			s.index[en.name] = int32(i)
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

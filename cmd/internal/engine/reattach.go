package engine

// queuedFor returns the acquire of request req that s has waiting in a
// queue, if any: a caller that retries an acquire whose answer it lost
// (its connection broke, or the member it waited on stopped leading) finds
// its place in the queue again instead of taking a second one, which
// would be granted a second lease for the same request. A waiter of the
// same request with other arguments is ErrRequestMismatch. O(waiters of
// s).
func (s *session) queuedFor(req string, hash uint64) (*Waiter, error) {
	if req == "" {
		return nil, nil
	}
	for _, w := range s.waiters {
		if w.req != req {
			continue
		}
		if w.hash != hash {
			return nil, ErrRequestMismatch
		}
		return w, nil
	}
	return nil, nil
}

package eventlog

// reader checks rows as Load reads them back: sequence numbers that are not
// negative, a snapshot first, then events that follow it without a gap. It is
// the only code that turns stored columns back into records.
type reader struct {
	next uint64 // the sequence number the next event must carry
}

// snapshot checks the newest snapshot's row (found false: there is none) and
// returns it, setting where events must resume.
func (r *reader) snapshot(found bool, seq, time int64, data []byte) (*Snapshot, error) {
	if !found {
		r.next = 1
		return nil, nil
	}
	if seq < 0 {
		return nil, corruptError("snapshot with negative sequence number %d", seq)
	}
	r.next = uint64(seq) + 1
	return &Snapshot{Seq: uint64(seq), Time: time, Data: nonNil(data)}, nil
}

// record checks one event's row and returns it.
func (r *reader) record(seq, time int64, data []byte) (Record, error) {
	if seq < 0 || uint64(seq) != r.next {
		return Record{}, corruptError("event %d found where %d comes next: the record has a gap", seq, r.next)
	}
	r.next++
	return Record{Seq: uint64(seq), Time: time, Data: nonNil(data)}, nil
}

// nonNil makes stored and loaded data compare alike: a NOT NULL column holds
// an empty blob, never nil.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

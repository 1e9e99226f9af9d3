package eventlog

import (
	"errors"
	"fmt"
)

// Sentinels for errors.Is. Every error this package makes matches one of them
// or wraps the driver's error.
var (
	// ErrCommitFailed: a commit failed, so the engine holds changes that are
	// not on record. The process must stop and restart from the record.
	ErrCommitFailed = errors.New("event log commit failed")
	// ErrStopped: the writer was stopped before the sequence number waited
	// for was committed.
	ErrStopped = errors.New("event log writer stopped")
	// ErrNotAdded: Wait was asked for a sequence number that was never added.
	ErrNotAdded = errors.New("sequence number was never added to the writer")
	// ErrSequence: records given to Append do not continue the record
	// without a gap, or a snapshot is older than the newest one or ahead of
	// the record.
	ErrSequence = errors.New("sequence number out of order")
	// ErrCorrupt: what is stored cannot be the record this package wrote
	// (a gap, a negative number, a table with a foreign shape).
	ErrCorrupt = errors.New("corrupt event log")
	// ErrURL: the URL names no backend this package knows.
	ErrURL = errors.New("unsupported event log URL")
	// ErrSchemaTooNew: the database was written by a newer governord.
	ErrSchemaTooNew = errors.New("event log schema is newer than this binary")
	// ErrClosed: the backend was closed.
	ErrClosed = errors.New("event log closed")
)

// SchemaTooNewError says which database is newer than this binary and by how
// much. It matches ErrSchemaTooNew.
type SchemaTooNewError struct {
	Where string // the database, with any password removed
	Have  int64  // the schema version found in the database
	Know  int64  // the newest schema version this binary knows
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("the event log at %s was written by a newer governord "+
		"(schema version %d, this binary knows up to %d); upgrade governord", e.Where, e.Have, e.Know)
}

// Is reports that a SchemaTooNewError is ErrSchemaTooNew.
func (e *SchemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

func sequenceError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSequence}, args...)...)
}

func corruptError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// wrapStore adds the operation and the store to err, except to a
// SchemaTooNewError, whose message already says everything.
func wrapStore(op, where string, err error) error {
	var tooNew *SchemaTooNewError
	if err == nil || errors.As(err, &tooNew) {
		return err
	}
	return fmt.Errorf("%s event log %s: %w", op, where, err)
}

package durable

import (
	"context"
	"fmt"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
)

// load rebuilds the engine: the newest snapshot, then every event after it.
// Restart is CPU-bound, so the two halves overlap on two cores: the snapshot
// is decompressed, decoded and restored on a goroutine of its own while the
// events after it are read and decoded; those are held and replayed, in
// order, once the snapshot is restored.
func (s *Store) load(ctx context.Context, opts Options) (*engine.Image, error) {
	l := &loader{eopts: engine.Options{Clock: opts.Clock, Sink: s.sink}, done: make(chan struct{})}
	err := s.backend.Load(ctx, l.restore, l.replay)
	<-l.done // the snapshot goroutine has returned, whatever happened
	if err == nil {
		err = l.flush()
	}
	if err != nil {
		return nil, fmt.Errorf("load the record: %w", err)
	}
	s.Engine = l.eng
	s.log.Info("record loaded", "seq", s.Engine.Seq(), "replayed_events", l.events)
	return l.img, nil
}

// loader is one load's state. restore and replay run on the caller of
// Backend.Load; the snapshot goroutine sets eng, img and err, and closes
// done, before replay reads them.
type loader struct {
	eopts engine.Options
	done  chan struct{} // closed once the snapshot is restored or failed

	eng    *engine.Engine
	img    *engine.Image
	err    error           // why the snapshot could not be restored
	held   []*engine.Event // decoded before the snapshot was restored
	events int
}

// restore starts restoring snap (nil: none, an empty engine) and returns.
func (l *loader) restore(snap *eventlog.Snapshot) error {
	if snap == nil {
		l.eng, l.img = engine.New(l.eopts), engine.NewImage(nil)
		close(l.done)
		return nil
	}
	go func() {
		defer close(l.done)
		l.eng, l.img, l.err = restoreSnapshot(l.eopts, snap)
	}()
	return nil
}

// restoreSnapshot rebuilds an engine and its snapshot image from a stored
// snapshot.
func restoreSnapshot(eopts engine.Options, snap *eventlog.Snapshot) (*engine.Engine, *engine.Image, error) {
	raw, err := unpack(snap.Data)
	if err != nil {
		return nil, nil, err
	}
	st, err := engine.DecodeSnapshot(raw)
	if err != nil {
		return nil, nil, err
	}
	if st.Seq != snap.Seq {
		return nil, nil, fmt.Errorf("%w: snapshot row %d holds state at %d", engine.ErrCorrupt, snap.Seq, st.Seq)
	}
	e, err := engine.Restore(eopts, st)
	if err != nil {
		return nil, nil, err
	}
	return e, engine.NewImage(st), nil
}

// replay decodes one event, and replays it if the snapshot is restored;
// until then it holds it.
func (l *loader) replay(rec eventlog.Record) error {
	ev, err := engine.DecodeEvent(rec.Data)
	if err != nil {
		return err
	}
	if ev.Seq != rec.Seq {
		return fmt.Errorf("%w: event row %d holds event %d", engine.ErrCorrupt, rec.Seq, ev.Seq)
	}
	l.events++
	select {
	case <-l.done:
	default:
		l.held = append(l.held, ev)
		return nil
	}
	if err := l.flush(); err != nil {
		return err
	}
	return l.eng.Replay(ev)
}

// flush replays the held events, once done is closed.
func (l *loader) flush() error {
	if l.err != nil {
		return l.err
	}
	for i, ev := range l.held {
		if err := l.eng.Replay(ev); err != nil {
			return err
		}
		l.held[i] = nil
	}
	l.held = nil
	return nil
}

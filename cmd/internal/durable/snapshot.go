package durable

import (
	"context"
	"fmt"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
)

// snapshots runs until Close, saving a snapshot each time the sink asks.
func (s *Store) snapshots(img *engine.Image) {
	defer close(s.snapDone)
	for {
		select {
		case <-s.stop:
			return
		case <-s.writer.Failed():
			return
		case <-s.sink.trigger:
		case reply := <-s.now:
			err := s.snapshot(img)
			s.count(err, img)
			reply <- err
			continue
		}
		s.count(s.snapshot(img), img)
	}
}

func (s *Store) count(err error, img *engine.Image) {
	s.mu.Lock()
	if err != nil {
		s.stats.SnapshotErrors++
	} else {
		s.stats.Snapshots++
		s.stats.LastSnapshot = img.Seq()
	}
	s.mu.Unlock()
	if err != nil {
		s.log.Error("snapshot failed; the events stay on record and the next snapshot tries again", "err", err)
	}
}

// snapshot captures what changed (the only step under the engine lock),
// merges it into the image, waits until the events it covers are on record,
// and saves it compressed; the save deletes those events in the same
// transaction.
func (s *Store) snapshot(img *engine.Image) error {
	start := time.Now()
	img.Apply(s.Engine.Capture())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st := img.Snapshot()
	if err := s.writer.Wait(ctx, st.Seq); err != nil {
		return fmt.Errorf("wait for events up to %d: %w", st.Seq, err)
	}
	raw, err := st.Encode()
	if err != nil {
		return fmt.Errorf("encode snapshot: %w", err)
	}
	data, err := pack(raw)
	if err != nil {
		return fmt.Errorf("compress snapshot: %w", err)
	}
	if err := s.backend.SaveSnapshot(ctx, eventlog.Snapshot{Seq: st.Seq, Time: st.Time, Data: data}); err != nil {
		return fmt.Errorf("save snapshot: %w", err)
	}
	s.log.Debug("snapshot saved", "seq", st.Seq, "nodes", len(st.Nodes), "bytes", len(raw), "stored_bytes", len(data), "took", time.Since(start))
	return nil
}

// SnapshotNow takes a snapshot and returns once it is saved. Tests and tools
// use it; the daemon relies on the automatic ones.
func (s *Store) SnapshotNow(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case s.now <- reply:
	case <-s.snapDone:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

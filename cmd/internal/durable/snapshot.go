package durable

import (
	"context"
	"fmt"
	"io"
	"time"

	"governor.dev/governor/cmd/internal/engine"
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
// and streams it, compressed, into the record, which publishes it and
// deletes those events in one transaction. The image is encoded, compressed
// and stored a chunk at a time: no buffer grows with the tree.
func (s *Store) snapshot(img *engine.Image) error {
	start := time.Now()
	img.Apply(s.Engine.Capture())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seq := img.Seq()
	if err := s.writer.Wait(ctx, seq); err != nil {
		return fmt.Errorf("wait for events up to %d: %w", seq, err)
	}
	var raw int64
	stored := &counter{}
	err := s.backend.StreamSnapshot(ctx, seq, img.Time(), func(w io.Writer) (err error) {
		stored.w = w
		raw, err = pack(stored, img.WriteTo)
		return err
	})
	if err != nil {
		return fmt.Errorf("save snapshot: %w", err)
	}
	s.log.Debug("snapshot saved", "seq", seq, "nodes", img.Nodes(), "bytes", raw, "stored_bytes", stored.n, "took", time.Since(start))
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

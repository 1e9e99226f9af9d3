package server

import (
	"context"
)

// room waits for space in the writer's backlog before an engine call: the
// back-pressure that keeps memory bounded under load.
func (s *Server) room(ctx context.Context) error {
	if s.closed() {
		return unavailable(msgStopping)
	}
	if err := s.store.Room(ctx); err != nil {
		return recordError(ctx, err)
	}
	return nil
}

// settle waits until the record holds event seq, then returns the engine's
// answer err as the client sees it. An answer, an error too, may depend on
// state up to seq, so it is given only once that state is on record; if the
// record cannot get there, the answer is Unavailable instead.
func (s *Server) settle(ctx context.Context, seq uint64, err error) error {
	end := RecordWait(ctx, seq)
	werr := s.store.Wait(ctx, seq)
	end(werr)
	if werr != nil {
		return recordError(ctx, werr)
	}
	return toConnect(err)
}

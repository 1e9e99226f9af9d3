package faultnet

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/hashicorp/raft"
)

// snapshotJSON encodes *state, read under mu, as a snapshot of a test FSM.
func snapshotJSON[T any](mu *sync.Mutex, state *T) (raft.FSMSnapshot, error) {
	mu.Lock()
	defer mu.Unlock()
	data, err := json.Marshal(state)
	return bytesSnapshot(data), err
}

// restoreJSON decodes a snapshot made by snapshotJSON into *state, under mu.
func restoreJSON[T any](r io.ReadCloser, mu *sync.Mutex, state *T) error {
	defer r.Close()
	var v T
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	*state = v
	return nil
}

// bytesSnapshot is a snapshot already encoded.
type bytesSnapshot []byte

func (s bytesSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (bytesSnapshot) Release() {}

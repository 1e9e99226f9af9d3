package faultnet

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"
)

// quotaFSM is the replicated state of the harness tests: a quota per key
// whose consumes are applied once per request id, and a pool of leases.
type quotaFSM struct {
	limit  int64 // the cap of each key
	leases int   // the size of the pool

	mu sync.Mutex // guards st
	st quotaState
}

// quotaState is what quotaFSM replicates and snapshots.
type quotaState struct {
	Usage   map[string]int64
	Answers map[string]bool // the answer to each consume, by request id
	Held    map[string]bool // leases granted and not released
	Next    int             // the number of leases ever granted
}

// command is one log entry of quotaFSM.
type command struct {
	Op        string // consume, acquire or release
	Key       string
	N         int64
	RequestID string
	ID        string
}

// reply is what applying a command returns.
type reply struct {
	OK bool
	ID string
}

func newQuotaFSM(limit int64, leases int) *quotaFSM {
	return &quotaFSM{limit: limit, leases: leases, st: quotaState{
		Usage: map[string]int64{}, Answers: map[string]bool{}, Held: map[string]bool{},
	}}
}

func (f *quotaFSM) Apply(l *raft.Log) any {
	var cmd command
	if err := json.Unmarshal(l.Data, &cmd); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch cmd.Op {
	case "consume":
		return f.consumeLocked(cmd)
	case "acquire":
		if len(f.st.Held) >= f.leases {
			return reply{}
		}
		f.st.Next++
		id := fmt.Sprintf("L%d", f.st.Next)
		f.st.Held[id] = true
		return reply{OK: true, ID: id}
	case "release":
		held := f.st.Held[cmd.ID]
		delete(f.st.Held, cmd.ID)
		return reply{OK: held}
	}
	return fmt.Errorf("unknown command %q", cmd.Op)
}

func (f *quotaFSM) consumeLocked(cmd command) reply {
	if first, seen := f.st.Answers[cmd.RequestID]; seen {
		return reply{OK: first}
	}
	ok := cmd.N > 0 && f.st.Usage[cmd.Key] <= f.limit-cmd.N
	if ok {
		f.st.Usage[cmd.Key] += cmd.N
	}
	f.st.Answers[cmd.RequestID] = ok
	return reply{OK: ok}
}

func (f *quotaFSM) usage(key string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st.Usage[key]
}

func (f *quotaFSM) held(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st.Held[id]
}

func (f *quotaFSM) Snapshot() (raft.FSMSnapshot, error) {
	return snapshotJSON(&f.mu, &f.st)
}

func (f *quotaFSM) Restore(r io.ReadCloser) error {
	return restoreJSON(r, &f.mu, &f.st)
}

package cluster

import "github.com/hashicorp/raft"

// await waits for f's answer, or until this member's raft has shut down.
// raft v1.8.0 never answers the futures of commands it had queued for its
// FSM when it shuts down, and a call must not wait for them forever: once
// raft has stopped, a future without an answer fails with
// raft.ErrRaftShutdown, which a command's caller gets as
// ErrUnknownOutcome (it may have been committed). The goroutine that
// waits for such a future stays blocked; there is one per call in flight
// at shutdown.
func (n *Node) await(f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-n.halted:
	}
	select {
	case err := <-done:
		return err
	default:
		return raft.ErrRaftShutdown
	}
}

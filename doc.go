// Package governor is the Go SDK of Governor: what a worker imports to ask
// governord whether it may spend, run at once, or still run.
//
// A program dials once and creates a task. From then on the task travels in
// its context.Context, so code deep in a call stack is governed without a
// handle:
//
//	client, err := governor.Dial(ctx)
//	...
//	ctx, task, err := client.NewTask(ctx, governor.Spec{Name: "crawl", Quotas: map[string]int64{"http": 500}})
//	...
//	defer task.Close()
//	_, err = governor.Consume(ctx, "tool_calls", 1) // denied with the cap that was hit
//	_, err = governor.Wait(ctx, "api", 1)           // sleeps until a slot of the rate caps
//
// Transport, NewDB, Retry, Do and NewGroup govern HTTP requests, SQL
// transactions, retries and fan-out in one line each; Wait paces a caller
// to the rate caps on its chain.
//
// The SDK fails closed. A call governord cannot answer is never allowed by
// default: a read is refused with ErrUnavailable, and a call that changes
// state is sent again with the same request id (governord applies an id
// once) until it is answered or its context ends, which is then an
// *UnknownOutcomeError matching ErrOutcomeUnknown; and when no heartbeat has
// succeeded within 80% of the session's TTL, measured on the monotonic clock
// from when the last successful one was sent, every task context of the
// client is cancelled with ErrSessionLost, before governord itself would end
// the session and its leases. The client is not over then: it opens a new
// session by itself, with capped full-jitter backoff, and new tasks work
// again; until then NewTask fails with ErrSessionLost.
//
// Goroutines: a Client runs two per session, started when the session
// opens and stopped when it is lost or the client is closed: the session
// loop (heartbeats, the fail-closed watchdog, and the check of tasks the
// watch stream cannot report) and the watch loop (one WatchNode stream for
// all the session's tasks, reopened when it breaks). After a loss one more
// opens the next session; a cancelled Acquire starts one that asks again by
// its request id and releases what it finds. Close stops and waits for
// them all. A Group runs one acquiring goroutine while it has queued
// functions, plus one goroutine per function that holds a lease.
package governor

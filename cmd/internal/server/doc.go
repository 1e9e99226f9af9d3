// Package server is governord's API: the GovernorService over Connect (gRPC,
// gRPC-Web and JSON on one handler), with the standard gRPC health check and
// server reflection beside it.
//
// It owns everything between a request and the engine: who is asking (a
// session token or an API key, each confining the caller to a scope), what
// they may ask (every field is checked before the engine sees it), request
// ids (a retry that arrives while the first attempt runs waits for it), and
// what an answer looks like (every engine error becomes a standard status
// code with a structured detail and a message a person or a model can act
// on).
//
// Every call follows the rule write before reply: Store.Room (back-pressure),
// the engine call, then Store.Wait for the sequence number the engine named,
// also for reads and for errors, since an answer may depend on state that is
// not yet on record. Only then is the caller answered. If the record failed,
// the answer is Unavailable, never one from state ahead of the record.
//
// WatchNode streams are fed by Publish with committed events only, through a
// mirror of the tree's shape (ids, parents, names, states, creators) that the
// server keeps from those events. Over a cluster member (Replicated) the
// replica feeds them with the events of each command it applies, and only
// the leader serves them (leading.go).
//
// With Options.Tracing each call has an OpenTelemetry span that continues
// the caller's trace and names the node, the decision and the waits for the
// record and the queue (trace.go); without it the handlers carry no
// tracing interceptor and their tracing helpers allocate nothing.
//
// Goroutines: handlers run on the HTTP server's goroutines. Publish runs on
// the store's writer goroutine: it queues copies of the events and starts,
// when none runs, the hub's drain goroutine, which applies them in order
// and exits once nothing waits (hubqueue.go), so the writer's next commit
// never waits for the watch work of a wide tenant; Publish waits only while
// the hub is feedBehind events behind. A member's feed applies on raft's
// FSM goroutine itself. A watcher that falls behind is closed. Close ends
// open streams and waiting Acquires; it is idempotent.
package server

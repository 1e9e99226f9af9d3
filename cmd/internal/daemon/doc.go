// Package daemon is governord: it opens the durable record, rebuilds the
// engine from it, seeds it from the configuration, and serves the API and
// the metrics until it is stopped or the record fails. It lives outside
// package main so that tests and the benchmark can run governord inside
// their own process (Start, Addr, Stop) as well as the real binary (Main).
//
// # Start, in order
//
//  1. Refuse a plain-text API beyond loopback (ErrPlaintext) and any other
//     mistake in the configuration; read the TLS certificate.
//  2. Open the record (durable.Open): the newest snapshot, the events after
//     it, the retention settings, group commit as configured.
//  3. Reconcile: the file seeds the record, the record decides afterwards
//     (reconcile.go says exactly how).
//  4. Start the adaptive controllers, build the API, bind the listeners,
//     start the reaper, serve.
//
// # Stop
//
// Stop (governord: SIGINT or SIGTERM) refuses new calls and ends waiting
// acquires and watch streams with Unavailable, closes the listeners, lets
// the calls in flight finish within a grace period, stops the controllers
// and the reaper, and closes the record, which commits what is pending:
// everything acknowledged is on record. A failed commit instead stops the
// daemon at once: the engine is ahead of its record, so no answer may be
// given from it. The calls in flight fail with Unavailable, the listeners
// close, and Done, Err and Wait report an error wrapping ErrRecordFailed;
// governord exits 1 so that a supervisor starts it again from the record.
//
// # Goroutines
//
// Started by Start, each with one duty:
//
//   - the supervisor (supervise): waits for Stop, a failed commit or a
//     listener that failed, then runs the one shutdown and closes Done. It
//     owns every teardown step; nothing else closes the listeners or the
//     record.
//   - the API listener (http.Server.Serve, or ServeTLS): owns the API's
//     socket; net/http runs each connection's handlers on goroutines of its
//     own, which call into the server package.
//   - the metrics listener, when metrics are on: owns their socket.
//   - the reaper: owns its ticker; every reap interval it takes the
//     decisions time has made (engine.Reap) and waits for them to be on
//     record. Stopped by the supervisor, idempotently.
//
// Owned by the packages that start them: the record's writer and snapshot
// goroutines (stopped by durable.Store.Close), the adaptive controller's
// goroutine (adaptive.Controller.Stop) and, when the configuration has a
// tracing endpoint, the OpenTelemetry batch span processor's goroutine,
// which the supervisor flushes and stops last (stopTracing), within 5 s. The writer goroutine calls this
// package's hooks after each commit, which hand committed events to the
// metrics, the controllers and the API's watch streams without blocking.
package daemon

// Package bench is govbench's workloads: the same work run with and without
// governord against a simulated downstream service, then governord and its
// workers broken on purpose.
//
// The downstream (Downstream) is a real HTTP server on loopback whose
// latency grows with its load and which sheds with 503 beyond its capacity;
// its capacity can change while a run goes on. Each scenario starts
// governord in this process (cmd/internal/daemon, a memory, SQLite or
// PostgreSQL record) or uses one at an address; the restart scenario runs
// governord as a process of its own, so that it can be killed with SIGKILL,
// and the failover scenario three, as one cluster, and kills its leader.
// The scenarios reach governord through its API only, with the admin key:
// each makes its tenants, pools and budgets under the root, under names of
// its own, and ends them (and removes the pools' limits) when done.
//
// Counts (requests sent with governord, grants, refusals, charges) are the
// same from run to run; timings, and what the service sheds when nothing
// governs it, vary.
//
// Goroutines: every goroutine a scenario starts (workers, waiters, the
// downstream's server) ends before the scenario returns. Nothing is shared
// between scenarios.
package bench

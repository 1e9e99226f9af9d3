// Package adaptive moves the shared pool's concurrency limit of a class to
// follow the downstream it guards: additive increase, multiplicative decrease.
//
// Every released lease reports its latency and whether the downstream said it
// was overloaded. A Controller collects those reports per class from the
// events on record (Observe) and, every interval, decides (Step): with fewer
// than MinSamples reports since its last decision it waits; if the p95
// latency of the reports is over TargetP95 or the share of overloaded reports
// is over MaxOverloadShare, the root's limit on the class becomes
// max(Min, ⌊limit × 0.7⌋); otherwise it becomes min(Max, limit + 1). Back off
// fast, probe slowly: a limit that never probes upward never recovers. The
// release of a lease granted before the limit last changed is not a report:
// it tells of the old limit, and counting it would cut twice for one
// overload.
//
// Each change is an engine call like any other (engine.AdjustLimit, then the
// store's Wait for its sequence number), and its event records the inputs
// that caused it. The learned limit is therefore part of the record: a
// restarted controller resumes from it and sets Initial only on a root that
// has no limit on the class. Lowering a limit revokes nothing; grants stop
// until enough leases come back.
//
// Goroutines: one, started by Controller.Start and stopped (waiting) by
// Controller.Stop. It owns the schedule of decisions; the reports belong to
// a mutex-guarded window per class that Observe fills without blocking.
package adaptive

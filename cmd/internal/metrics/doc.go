// Package metrics serves governord's Prometheus metrics from a registry of
// its own.
//
// Two kinds of metric live here. Counters and histograms of what happened
// (calls by method and code, events by kind, commits) are updated as it
// happens, by the server and by the store's writer goroutine. Gauges of how
// things stand (how full each pool is, what each tenant has spent, how many
// acquires wait) are read from the engine when Prometheus scrapes, by a
// collector that looks at the root and its children, the tenants, and never
// at a task.
//
// Labels are methods, codes, event kinds, tenants, classes and resources
// only: the number of series grows with the configuration, not with the work.
// A million tasks do not make a million series, and a tenant that makes up
// thousands of resource or class names does not either: per node, a name
// has series of its own when the node caps it (the configuration or an
// operator set the cap) or it is among the 20 most used; the others are
// summed under the name "_other".
//
// The package starts no goroutine. Metrics is safe for concurrent use.
package metrics

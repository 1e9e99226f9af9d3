// Package config reads governord's YAML configuration.
//
// Reading is strict. Every ${VAR} in a value is replaced by the environment
// variable VAR, and an unset one is a mistake ($$ writes a dollar). A key the
// schema does not know, a value of the wrong type and a value outside what
// is allowed are all mistakes, and Parse reports every one of them at once,
// each with its line and the path of the field, as in
//
//	governor.yaml:12: tenants[1].weight: must be between 1 and 1000, got 0
//
// The file decides where governord listens, its TLS certificate, where the
// record is kept, the keys, the shared pools, the tenants with their caps and
// defaults, the adaptive controllers and the timings. What the file says
// about caps seeds the record; how the daemon reconciles the two on restart
// is the daemon's concern.
package config

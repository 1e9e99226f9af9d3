// Package gubernator serves Gubernator's v1 API on governord's API port, so
// that existing Gubernator clients and curl scripts work against governord
// unchanged: the gRPC service pb.gubernator.V1 (through Connect, which also
// speaks gRPC-Web and Connect) and the HTTP JSON paths POST
// /v1/GetRateLimits and GET /v1/HealthCheck in the form Gubernator's gateway
// writes them.
//
// Each (name, unique_key) is a rate cap in governord's tree: under the
// configured tenant, a node per name and beneath it a node per unique_key
// holding a rate cap on the configured resource. A request is checked
// against that cap and every cap above it on the same resource, in one
// engine step, and answered only once the step is on record.
//
// The package turns wire requests into Checks (validate.go), hands them to
// a Limiter (limit.go binds it to the engine), and turns the Verdicts back
// into wire answers. A problem with one request is that request's error
// field; only authentication, a malformed call or an unavailable record fail
// the call as a whole.
package gubernator

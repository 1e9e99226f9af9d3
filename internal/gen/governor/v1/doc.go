// Package governorv1 holds the messages of the governor.v1 wire contract,
// generated from proto/governor/v1/governor.proto. Only this file is written
// by hand; regenerate the rest with `go generate ./internal/gen`.
package governorv1

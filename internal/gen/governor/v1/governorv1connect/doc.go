// Package governorv1connect holds the Connect client and handler of
// governor.v1.GovernorService, generated from
// proto/governor/v1/governor.proto. Only this file is written by hand;
// regenerate the rest with `go generate ./internal/gen`.
package governorv1connect

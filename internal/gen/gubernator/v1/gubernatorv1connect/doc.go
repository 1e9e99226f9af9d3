// Package gubernatorv1connect holds the Connect client and handler of
// pb.gubernator.V1, generated from proto/gubernator/v1/gubernator.proto.
// Only this file is written by hand; regenerate the rest with
// `go generate ./internal/gen`.
package gubernatorv1connect

// Package protoconflict lets Gubernator's generated code and governord's
// copy of the same gubernator.proto register in one process: both declare
// pb.gubernator.*, and the protobuf runtime panics at the second
// registration unless GOLANG_PROTOBUF_REGISTRATION_CONFLICT says otherwise.
// Each side marshals with its own Go types, so which registration the
// global registry keeps changes no message on the wire.
//
// The variable must be set before either generated package initializes.
// This package imports only os, so by the language's initialization order
// (the first package, by import path, whose imports are initialized goes
// next) it initializes before net/http, and so before anything that
// speaks gRPC. Import it for effect from the main package.
package protoconflict

import "os"

func init() {
	const env = "GOLANG_PROTOBUF_REGISTRATION_CONFLICT"
	if os.Getenv(env) == "" {
		_ = os.Setenv(env, "ignore") // Setenv fails only on a malformed name
	}
}

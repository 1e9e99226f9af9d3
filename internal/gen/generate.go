// Package gen holds the Go code generated from the wire contracts in proto/:
// governor.v1's messages in governor/v1 and its Connect client and handler in
// governor/v1/governorv1connect, and likewise Gubernator's compatible API in
// gubernator/v1 and gubernator/v1/gubernatorv1connect. The generated files are
// committed; a test fails when they differ from what the proto generates.
//
// After editing the proto, regenerate with:
//
//	go generate ./internal/gen
//
// buf and both plugins are Go tool dependencies pinned in tools/go.mod, a
// module of their own so that their dependencies never reach the SDK's
// users; this needs nothing but the Go toolchain. buf runs in tools/, where
// `go tool` finds the plugins buf.gen.yaml names.
package gen

//go:generate go -C ../../tools tool buf generate .. --template ../buf.gen.yaml -o ..

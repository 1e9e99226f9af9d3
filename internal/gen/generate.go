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
// buf and both plugins are Go tool dependencies pinned in go.mod, so this
// needs nothing but the Go toolchain.
package gen

//go:generate go tool buf generate ../.. --template ../../buf.gen.yaml -o ../..

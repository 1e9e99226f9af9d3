// Package gen holds the Go code generated from the wire contract in
// proto/governor/v1: the messages in governor/v1 and the Connect client and
// handler in governor/v1/governorv1connect. The generated files are
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

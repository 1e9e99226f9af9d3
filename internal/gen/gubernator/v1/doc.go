// Package gubernatorv1 holds the messages of Gubernator's v1 API
// (wire package pb.gubernator), generated from
// proto/gubernator/v1/gubernator.proto. Only this file is written by hand;
// regenerate the rest with `go generate ./internal/gen`.
package gubernatorv1

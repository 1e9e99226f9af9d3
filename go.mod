module governor.dev/governor

go 1.26.7

require (
	connectrpc.com/connect v1.21.1
	go.opentelemetry.io/otel v1.47.0
	google.golang.org/protobuf v1.36.13-0.20261016172727-e9ee2a76ab8e
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
)

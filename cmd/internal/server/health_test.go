package server

import (
	"context"
	"slices"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// TestHealthAndReflection: the standard health check answers over gRPC,
// reflection lists the service and describes it, as grpcurl asks.
func TestHealthAndReflection(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	health := grpchealth.NewClient(e.h2c, e.http.URL, connect.WithGRPC())
	for _, svc := range []string{"", governorv1connect.GovernorServiceName} {
		res, err := health.Check(ctx, &grpchealth.CheckRequest{Service: svc})
		if err != nil || res.Status != grpchealth.StatusServing {
			t.Fatalf("health of %q: %v %+v", svc, err, res)
		}
	}
	if _, err := health.Check(ctx, &grpchealth.CheckRequest{Service: "no.such.Service"}); code(err) != "not_found" {
		t.Fatalf("health of an unknown service: want not_found, got %v", err)
	}

	stream := grpcreflect.NewClient(e.h2c, e.http.URL, connect.WithGRPC()).NewStream(ctx)
	defer stream.Close()
	names, err := stream.ListServices()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []protoreflect.FullName{governorv1connect.GovernorServiceName, grpchealth.HealthV1ServiceName} {
		if !slices.Contains(names, want) {
			t.Fatalf("reflection lists %v, missing %s", names, want)
		}
	}
	files, err := stream.FileContainingSymbol(governorv1connect.GovernorServiceName)
	if err != nil || len(files) == 0 || files[0].GetPackage() != "governor.v1" {
		t.Fatalf("reflection of the service: %v, %d files", err, len(files))
	}

	e.srv.Close()
	res, err := health.Check(ctx, &grpchealth.CheckRequest{})
	if err != nil || res.Status != grpchealth.StatusNotServing {
		t.Fatalf("health after Close: %v %+v", err, res)
	}
}

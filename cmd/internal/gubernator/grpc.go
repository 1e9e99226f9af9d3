package gubernator

import (
	"context"
	"errors"
	"sync"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // requests compressed as Connect accepts them
	"google.golang.org/grpc/status"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
)

// GRPCPrefix is the path prefix of every gRPC call of Gubernator's service.
const GRPCPrefix = "/" + gubernatorv1connect.V1Name + "/"

// GRPCServer returns a grpc.Server, grpc-go's own transport, that serves
// pb.gubernator.V1 with the same answers, errors and message size limit as
// the Connect handler Register adds (and gzip, as Connect accepts it).
// It reads GetRateLimits' request and writes its answer with wireCodec.
// Only the gRPC protocol reaches it; gRPC-Web and Connect stay with
// Register's handler. A call to any other service on its connections is
// refused with Unimplemented and a message that says to use another
// connection.
func (s *Service) GRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	base := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(maxMessageBytes), grpc.UnknownServiceHandler(otherService),
		grpc.ForceServerCodecV2(newWireCodec()), grpc.NumStreamWorkers(streamWorkers),
	}
	srv := grpc.NewServer(append(base, opts...)...)
	srv.RegisterService(&grpcDesc, s)
	return srv
}

// streamWorkers is how many goroutines serve calls. Without them, grpc-go
// starts a goroutine per call whose stack grows while it reads the request
// (runtime.newstack: 7% of a 64-caller load's CPU). A worker keeps its
// grown stack until a garbage collection finds it idle and shrinks it, so
// workers help as long as there are not many more of them than calls in
// flight, which take turns: 1 to 3% with 64 workers, 5% with 256. Calls
// beyond this many at once get a goroutine each, as without workers.
const streamWorkers = 64

// grpcDesc is pb.gubernator.V1 for grpc.Server, as protoc-gen-go-grpc
// writes it, with the methods below as its handlers.
var grpcDesc = grpc.ServiceDesc{
	ServiceName: gubernatorv1connect.V1Name,
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "GetRateLimits", Handler: grpcGetRateLimits},
		{MethodName: "HealthCheck", Handler: grpcHealthCheck},
	},
	Metadata: "gubernator/v1/gubernator.proto",
}

func grpcGetRateLimits(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	m := requests.Get().(*gubernatorv1.GetRateLimitsReq)
	defer reuse(m)
	if err := dec(m); err != nil {
		return nil, err
	}
	res, err := srv.(*Service).getRateLimits(ctx, callHeader{grpc: ctx}, m)
	if err != nil {
		return nil, grpcStatus(err)
	}
	return res, nil
}

// requests holds decoded GetRateLimitsReq for later calls to decode into
// (wire.go reuses the structs of the requests they hold).
var requests = sync.Pool{New: func() any { return new(gubernatorv1.GetRateLimitsReq) }}

// pooledRequests is the most requests a GetRateLimitsReq in the pool may
// hold structs for, so that one large batch does not keep its memory.
const pooledRequests = 64

// reuse returns m to the pool once its call no longer reads it.
func reuse(m *gubernatorv1.GetRateLimitsReq) {
	if cap(m.Requests) <= pooledRequests {
		requests.Put(m)
	}
}

func grpcHealthCheck(srv any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var m gubernatorv1.HealthCheckReq
	if err := dec(&m); err != nil {
		return nil, err
	}
	return srv.(*Service).health(), nil
}

// grpcStatus is err as the status Connect's gRPC handler sends for it:
// the same code and message.
func grpcStatus(err error) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return status.Error(codes.Code(ce.Code()), ce.Message())
	}
	return status.Error(codes.Unknown, err.Error())
}

// otherService answers a call to any other service on a connection the
// GRPCServer took: it can serve only pb.gubernator.V1.
func otherService(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	return status.Errorf(codes.Unimplemented,
		"This connection's first call went to %s, which is served on a transport of its own that serves nothing else; call %s on a connection of its own.",
		gubernatorv1connect.V1Name, method)
}

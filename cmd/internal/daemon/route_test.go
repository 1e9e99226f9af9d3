package daemon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"governor.dev/governor/cmd/internal/pgtest"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
)

// oneUnder is a GetRateLimits call that every fresh key answers
// UNDER_LIMIT.
func oneUnder() *pb.GetRateLimitsReq {
	return &pb.GetRateLimitsReq{Requests: []*pb.RateLimitReq{{Name: "route", UniqueKey: "k", Hits: 1, Limit: 1000, Duration: 60_000}}}
}

// TestGubernatorGRPCIsServedByGRPCGo checks the API port's routing by a
// connection's first call: gRPC to pb.gubernator.V1 reaches grpc-go's
// transport, gRPC to any other service reaches net/http, as do Connect and
// gRPC-Web to pb.gubernator.V1 over h2c, each for several calls on one
// connection. net/http's HTTP/2 server dates every answer and grpc-go does
// not, which tells the two apart.
func TestGubernatorGRPCIsServedByGRPCGo(t *testing.T) {
	d := startDaemon(t, guberConfig(""), Options{})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+testTeamKey)
	addr := d.Addr().String()

	dialGRPC := func() *grpc.ClientConn {
		conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	t.Run("gRPC to Gubernator: grpc-go", func(t *testing.T) {
		conn := dialGRPC()
		for range 3 {
			var md metadata.MD
			res := &pb.GetRateLimitsResp{}
			err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", oneUnder(), res, grpc.Header(&md))
			if err != nil || res.Responses[0].Status != pb.Status_UNDER_LIMIT {
				t.Fatalf("got %v, %v; want UNDER_LIMIT", res, err)
			}
			if date := md.Get("date"); len(date) > 0 {
				t.Fatalf("answered with date %q: net/http served it, not grpc-go", date)
			}
		}
	})
	t.Run("gRPC to another service after Gubernator: refused", func(t *testing.T) {
		conn := dialGRPC()
		if err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", oneUnder(), &pb.GetRateLimitsResp{}); err != nil {
			t.Fatal(err)
		}
		err := conn.Invoke(ctx, "/grpc.health.v1.Health/Check", &healthReq{}, &healthReq{})
		if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "/grpc.health.v1.Health/Check on a connection of its own") {
			t.Fatalf("got %v, want Unimplemented saying to use another connection", err)
		}
	})
	t.Run("gRPC to another service: net/http", func(t *testing.T) {
		conn := dialGRPC()
		var md metadata.MD
		err := conn.Invoke(ctx, "/grpc.health.v1.Health/Check", &healthReq{}, &healthReq{}, grpc.Header(&md))
		if err != nil {
			t.Fatal(err)
		}
		if len(md.Get("date")) == 0 {
			t.Fatal("answered without a date: grpc-go served it, not net/http")
		}
	})
	h2c := func() *http.Client {
		tr := &http.Transport{}
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
		c := &http.Client{Transport: tr}
		t.Cleanup(c.CloseIdleConnections)
		return c
	}
	for name, opts := range map[string][]connect.ClientOption{
		"Connect over h2c":  nil,
		"gRPC-Web over h2c": {connect.WithGRPCWeb()},
		"gRPC by Connect":   {connect.WithGRPC()},
	} {
		t.Run(name, func(t *testing.T) {
			client := gubernatorv1connect.NewV1Client(h2c(), d.URL(), opts...)
			for range 3 {
				req := connect.NewRequest(oneUnder())
				req.Header().Set("Authorization", "Bearer "+testTeamKey)
				res, err := client.GetRateLimits(context.Background(), req)
				if err != nil || res.Msg.Responses[0].Status != pb.Status_UNDER_LIMIT {
					t.Fatalf("got %v, %v; want UNDER_LIMIT", res, err)
				}
			}
			health, err := grpchealth.NewClient(h2c(), d.URL(), opts...).Check(context.Background(), &grpchealth.CheckRequest{})
			if err != nil || health.Status != grpchealth.StatusServing {
				t.Fatalf("health: got %v, %v", health, err)
			}
		})
	}
}

// healthReq stands for grpc.health.v1's messages, both empty here.
type healthReq = pb.HealthCheckReq

// TestRouterClosesASilentConnection checks that a connection that sends
// nothing is closed once the first request is overdue, and reaches neither
// server.
func TestRouterClosesASilentConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := newRouter(ln, 50*time.Millisecond, "/x/")
	defer func() {
		r.HTTP().Close()
		r.GRPC().Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read %d bytes, %v; want the connection closed", n, err)
	}
}

// TestAckDropperDropsOnlyTheFirstAck checks that the client's answer to
// the sniffer's SETTINGS is removed and everything else passes unchanged.
func TestAckDropperDropsOnlyTheFirstAck(t *testing.T) {
	settings := []byte{0, 0, 6, frameSettings, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100}
	ack := []byte{0, 0, 0, frameSettings, flagAck, 0, 0, 0, 0}
	headers := []byte{0, 0, 2, frameHeaders, flagEndHeaders, 0, 0, 0, 1, 0x82, 0x86}
	in := bytes.Join([][]byte{[]byte(h2Preface), settings, headers, ack, headers, ack}, nil)
	want := bytes.Join([][]byte{[]byte(h2Preface), settings, headers, headers, ack}, nil)
	got, err := io.ReadAll(&ackDropper{r: bytes.NewReader(in)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n%x\nwant\n%x", got, want)
	}
}

// TestStopEndsGRPCGoConnections checks that Stop stops grpc-go's share of
// the port too: it returns, a connection grpc-go served fails its next
// call, and the port no longer accepts connections.
func TestStopEndsGRPCGoConnections(t *testing.T) {
	d, err := Start(context.Background(), guberConfig(""), Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("passthrough:///"+d.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+testTeamKey)
	if err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", oneUnder(), &pb.GetRateLimitsResp{}); err != nil {
		t.Fatal(err)
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Stop(stopCtx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	callCtx, cancelCall := context.WithTimeout(ctx, 5*time.Second)
	defer cancelCall()
	if err := conn.Invoke(callCtx, "/pb.gubernator.V1/GetRateLimits", oneUnder(), &pb.GetRateLimitsResp{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("a call after Stop got %v, want Unavailable", err)
	}
	if c, err := net.DialTimeout("tcp", d.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("the port still accepts connections after Stop")
	}
}

// TestFailedCommitEndsGRPCGoConnections checks that a failed commit stops
// grpc-go's share of the port with the rest: the call that could not be
// put on record gets Unavailable and the daemon stops with ErrRecordFailed.
func TestFailedCommitEndsGRPCGoConnections(t *testing.T) {
	pg := pgtest.StartDedicated(t)
	d, err := Start(context.Background(), guberConfig(pg.DSN()), Options{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("passthrough:///"+d.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+testTeamKey)
	if err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", oneUnder(), &pb.GetRateLimitsResp{}); err != nil {
		t.Fatal(err)
	}
	must(t, pg.Kill())
	callCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := conn.Invoke(callCtx, "/pb.gubernator.V1/GetRateLimits", oneUnder(), &pb.GetRateLimitsResp{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("a call after the database was killed got %v, want Unavailable", err)
	}
	select {
	case <-d.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the daemon did not stop after its commit failed")
	}
	if !errors.Is(d.Err(), ErrRecordFailed) {
		t.Fatalf("stopped with %v, want ErrRecordFailed", d.Err())
	}
}

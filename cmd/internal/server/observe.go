package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"connectrpc.com/connect"
)

// observer reports every GovernorService call to Options.Observe and logs
// internal errors.
type observer struct{ s *Server }

var _ connect.Interceptor = observer{}

func (o observer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		began := time.Now()
		res, err := next(ctx, req)
		o.done(req.Spec().Procedure, began, err)
		return res, err
	}
}

func (o observer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (o observer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		began := time.Now()
		err := next(ctx, conn)
		o.done(conn.Spec().Procedure, began, err)
		return err
	}
}

func (o observer) done(procedure string, began time.Time, err error) {
	method := procedure[strings.LastIndexByte(procedure, '/')+1:]
	code := "ok"
	if err != nil {
		c := codeOf(err)
		code = c.String()
		if c == connect.CodeInternal || c == connect.CodeUnknown {
			o.s.log.Error("call failed", "method", method, "err", err)
		}
	}
	if o.s.observe != nil {
		o.s.observe(method, code, time.Since(began))
	}
}

// codeOf is the status code a client receives for err.
func codeOf(err error) connect.Code {
	var ce *connect.Error
	switch {
	case errors.As(err, &ce):
		return ce.Code()
	case errors.Is(err, context.Canceled):
		return connect.CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return connect.CodeDeadlineExceeded
	}
	return connect.CodeUnknown
}

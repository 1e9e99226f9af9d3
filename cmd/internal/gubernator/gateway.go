package gubernator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"connectrpc.com/connect"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// The JSON forms of Gubernator's gateway: answers use the proto field names
// and write every field (so "error": "" and "retry_after": "0" are there),
// 64-bit integers as strings and enums by name; requests may use either
// field naming and either form of number, and unknown fields are ignored.
var (
	jsonOut = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}
	jsonIn  = protojson.UnmarshalOptions{DiscardUnknown: true}
)

// httpGetRateLimits serves POST /v1/GetRateLimits.
func (s *Service) httpGetRateLimits(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	if r.Method != http.MethodPost {
		writeError(w, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("%s takes POST, not %s", pathGetRateLimits, r.Method)))
		return
	}
	m, err := readRequest(w, r)
	if err != nil {
		s.done("GetRateLimits", began, err)
		writeError(w, err)
		return
	}
	res, err := s.getRateLimits(r.Context(), callHeader{http: r.Header}, m)
	if err != nil {
		writeError(w, err)
		return
	}
	data, ok := appendAnswersJSON(make([]byte, 0, 256), res)
	if !ok {
		writeJSON(w, http.StatusOK, res)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// readRequest reads a GetRateLimitsReq in JSON. The limit is the one gRPC
// callers have, maxMessageBytes of the decoded message as protobuf, so a
// batch that passes over gRPC passes here too; the JSON itself may be up to
// maxJSONBytes. Past either it is ResourceExhausted (429), as Gubernator
// answers a message over its limit.
func readRequest(w http.ResponseWriter, r *http.Request) (*gubernatorv1.GetRateLimitsReq, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
			"the body is over %d bytes of JSON; a call may carry %d bytes as protobuf: split the list", maxJSONBytes, maxMessageBytes))
	case err != nil:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("read the request body: %w", err))
	}
	var m gubernatorv1.GetRateLimitsReq
	if len(data) > 0 && !decodeRequestJSON(data, &m) {
		if err := jsonIn.Unmarshal(data, &m); err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("the body is not a GetRateLimitsReq in JSON: %w", err))
		}
	}
	if size := proto.Size(&m); size > maxMessageBytes {
		return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
			"the request is %d bytes as protobuf; a call may carry %d, over gRPC as here: split the list", size, maxMessageBytes))
	}
	return &m, nil
}

// httpHealthCheck serves GET /v1/HealthCheck.
func (s *Service) httpHealthCheck(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("%s takes GET, not %s", pathHealthCheck, r.Method)))
		return
	}
	writeJSON(w, http.StatusOK, s.health())
}

// writeJSON writes m as the gateway does, in compact JSON: protojson's own
// spacing varies from build to build on purpose, which scripts and caches
// that compare answers should not see.
func writeJSON(w http.ResponseWriter, status int, m proto.Message) {
	data, err := jsonOut.Marshal(m)
	if err == nil {
		data, err = compactJSON(data)
	}
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"code":13,"message":"internal error: encode the answer","details":[]}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// compactJSON removes the spaces between JSON tokens.
func compactJSON(data []byte) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(data))
	if err := json.Compact(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeError writes err as the gateway writes a gRPC status: the HTTP
// status of its code, and {"code", "message", "details"}.
func writeError(w http.ResponseWriter, err error) {
	code := connect.CodeOf(err)
	msg := err.Error()
	var ce *connect.Error
	if errors.As(err, &ce) {
		msg = ce.Message()
	}
	writeJSON(w, httpStatus(code), &spb.Status{Code: int32(code), Message: msg})
}

// httpStatus maps a status code to the HTTP status the gateway uses.
func httpStatus(c connect.Code) int {
	switch c {
	case connect.CodeCanceled:
		return 499
	case connect.CodeInvalidArgument, connect.CodeFailedPrecondition, connect.CodeOutOfRange:
		return http.StatusBadRequest
	case connect.CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case connect.CodeNotFound:
		return http.StatusNotFound
	case connect.CodeAlreadyExists, connect.CodeAborted:
		return http.StatusConflict
	case connect.CodePermissionDenied:
		return http.StatusForbidden
	case connect.CodeUnauthenticated:
		return http.StatusUnauthorized
	case connect.CodeResourceExhausted:
		return http.StatusTooManyRequests
	case connect.CodeUnimplemented:
		return http.StatusNotImplemented
	case connect.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

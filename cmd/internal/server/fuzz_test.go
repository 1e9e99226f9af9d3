package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"connectrpc.com/connect"
)

// fuzzProcedures are the calls whose request decoding the fuzzer feeds.
var fuzzProcedures = []string{
	"Consume", "EnsureNode", "CreateNode", "GetNode", "Acquire", "Release", "Validate",
	"SetQuota", "SetLimit", "SetDefaults", "CancelNode", "CloseNode", "OpenSession", "Heartbeat",
}

// validCodes are the codes a Connect error body may carry.
var validCodes = func() map[string]bool {
	m := map[string]bool{}
	for c := connect.CodeCanceled; c <= connect.CodeUnauthenticated; c++ {
		m[c.String()] = true
	}
	return m
}()

// FuzzRequestDecoding sends arbitrary bytes as a request body, in JSON or
// binary, to the service's calls: the answer is a response or a proper
// Connect error, never a panic or a malformed reply.
func FuzzRequestDecoding(f *testing.F) {
	for _, seed := range []string{
		`{"resource":"tokens","amount":"3","requestId":"r"}`,
		`{"name":"x","charge":{"resource":"tokens","amount":1}}`,
		`{"spec":{"name":"x","quotas":{"tokens":"5"},"deadline":"2030-01-01T00:00:00Z","weight":3}}`,
		`{"class":"db","maxHold":"1.5s"}`,
		`{"leaseId":"7","latency":"-1s"}`,
		`{"defaults":{"children":{"limits":{"db":1}}}}`,
		`{"ttl":"99999999999s"}`,
		`{"nodeId":"18446744073709551615"}`,
		`{"amount":1e400}`, `[`, `null`, "\x00\xff",
	} {
		f.Add(uint8(0), false, []byte(seed))
	}
	f.Add(uint8(0), true, []byte{0x08, 0x01, 0x12, 0x06, 't', 'o', 'k', 'e', 'n', 's', 0x18, 0x02})
	e := newEnv(f, "")
	h := e.srv.Handler()
	f.Fuzz(func(t *testing.T, which uint8, binary bool, body []byte) {
		proc := fuzzProcedures[int(which)%len(fuzzProcedures)]
		req := httptest.NewRequest(http.MethodPost, "/governor.v1.GovernorService/"+proc, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyA)
		if binary {
			req.Header.Set("Content-Type", "application/proto")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
		ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
		defer cancel()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(ctx))
		if ctx.Err() != nil {
			t.Fatalf("%s: no answer within 10s to %q", proc, body)
		}
		if rec.Code == http.StatusOK {
			return
		}
		if binary && rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: status %d with content type %q", proc, rec.Code, rec.Header().Get("Content-Type"))
		}
		var out struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || !validCodes[out.Code] || out.Message == "" {
			t.Fatalf("%s: status %d, body %q is not a Connect error", proc, rec.Code, rec.Body.String())
		}
		if out.Code == "internal" || out.Code == "unknown" {
			t.Fatalf("%s: %s for %q: %s", proc, out.Code, body, out.Message)
		}
	})
}

package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestSmallAnswersAreNotCompressed: a client that accepts gzip gets a short
// answer as it is (compressing it costs more than it saves) and a long one
// compressed at the fastest level, which gzip's header says in its tenth
// byte (XFL 4), so that no answer holds a processor long compressing.
func TestSmallAnswersAreNotCompressed(t *testing.T) {
	e := newEnv(t, "")
	quotas := map[string]int64{}
	for i := range 40 {
		quotas[fmt.Sprintf("resource-with-a-long-name-%02d", i)] = 1000
	}
	cl, sess := e.session(keyA)
	res, err := cl.CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{
		Spec: &governorv1.NodeSpec{Name: "wide", Quotas: quotas},
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, body, encoding string
	}{
		{"health check", "/grpc.health.v1.Health/Check", `{}`, ""},
		{"node with 40 quotas", "/governor.v1.GovernorService/GetNode", fmt.Sprintf(`{"nodeId": "%d"}`, res.Msg.Node.Id), "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.http.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept-Encoding", "gzip")
			req.Header.Set("Authorization", "Bearer "+sess.Token)
			resp, err := e.h2c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Content-Encoding"); got != tc.encoding {
				t.Fatalf("Content-Encoding %q for %d bytes, want %q", got, len(body), tc.encoding)
			}
			if tc.encoding != "gzip" {
				return
			}
			if len(body) < 10 || body[8] != 4 {
				t.Fatalf("gzip header % x: want XFL 4, the fastest level", body[:min(len(body), 10)])
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if plain, err := io.ReadAll(zr); err != nil || !bytes.Contains(plain, []byte("resource-with-a-long-name-39")) {
				t.Fatalf("the answer does not decompress to the node: %v", err)
			}
		})
	}
}

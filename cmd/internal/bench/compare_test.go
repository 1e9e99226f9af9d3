package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// TestCompareRunsEveryPeerOnBothProtocols compares governord with itself
// (memory only) and checks that every cell has one run per round and peer,
// every run counted calls, the first round of each was profiled, the table
// shows the ratios, and the chart is well-formed SVG with a line per peer
// and protocol.
func TestCompareRunsEveryPeerOnBothProtocols(t *testing.T) {
	ctx := context.Background()
	var peers []Peer
	for _, name := range []string{"first", "second"} {
		p, stop, err := StartRateGovernord(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = stop(context.WithoutCancel(ctx)) }()
		peers = append(peers, p)
	}
	profiles := t.TempDir()
	c, err := Compare(ctx, CompareOptions{Peers: peers, Callers: []int{1, 3}, Rounds: 2, Duration: 50 * time.Millisecond, ProfileDir: profiles})
	if err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(profiles); len(files) != 2*2*2 {
		t.Fatalf("%d profiles, want one per protocol, number of callers and peer", len(files))
	}
	if len(c.Cells) != 4 {
		t.Fatalf("%d cells, want 2 protocols × 2 numbers of callers", len(c.Cells))
	}
	for _, cell := range c.Cells {
		for i, runs := range cell.Runs {
			if len(runs) != 2 {
				t.Fatalf("%s %d callers: peer %d ran %d times, want 2", cell.Protocol, cell.Callers, i, len(runs))
			}
			for _, r := range runs {
				if r.Calls < cell.Callers || r.P99 <= 0 || r.PerSecond() <= 0 || r.CPUPerCall() <= 0 {
					t.Fatalf("%s %d callers: run %+v measured nothing", cell.Protocol, cell.Callers, r)
				}
			}
		}
	}
	table := c.Table()
	if len(table.Rows) != 4 || len(table.Columns) != 2+2*3 {
		t.Fatalf("table %v, want 4 rows of path, callers and two peers' throughput, p99 and CPU per call", table)
	}
	for _, row := range table.Rows {
		if !strings.HasSuffix(row[2], "(1.00×)") || !strings.Contains(row[5], "×)") || !strings.HasSuffix(row[4], "µs") {
			t.Fatalf("row %q: want the first peer at 1.00× and a ratio for the second", row)
		}
	}
	var svg bytes.Buffer
	if err := c.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if lines := countElements(t, svg.Bytes(), "polyline"); lines != 2+2*4 {
		t.Fatalf("the chart has %d polylines, want 2 axes and 4 lines in each of 2 panels", lines)
	}
}

// TestCompareFailsOnAWrongAnswer checks that a peer that refuses the calls
// (a key it does not know) ends the comparison with its answer.
func TestCompareFailsOnAWrongAnswer(t *testing.T) {
	ctx := context.Background()
	p, stop, err := StartRateGovernord(ctx, "wrong key", "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(context.WithoutCancel(ctx)) }()
	p.Key = "not-" + p.Key
	for _, proto := range []Protocol{GRPC, HTTPJSON} {
		q := p
		if proto == GRPC {
			q.HTTPURL = ""
		} else {
			q.GRPCAddr = ""
		}
		_, err := Compare(ctx, CompareOptions{Peers: []Peer{q}, Callers: []int{2}, Rounds: 1, Duration: 50 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "wrong key") {
			t.Fatalf("%s: got %v, want the refusal of peer \"wrong key\"", proto, err)
		}
	}
}

// countElements parses data as XML and counts the elements named name.
func countElements(t *testing.T, data []byte, name string) int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == name {
			n++
		}
	}
}

// TestUnderLimitAcceptsOnlyOneUnderLimitAnswer checks the load's check of
// an answer: exactly one response, UNDER_LIMIT, without an error.
func TestUnderLimitAcceptsOnlyOneUnderLimitAnswer(t *testing.T) {
	ok := &pb.RateLimitResp{Status: pb.Status_UNDER_LIMIT}
	for _, tc := range []struct {
		name string
		res  *pb.GetRateLimitsResp
		good bool
	}{
		{"under the limit", &pb.GetRateLimitsResp{Responses: []*pb.RateLimitResp{ok}}, true},
		{"no answer", &pb.GetRateLimitsResp{}, false},
		{"two answers", &pb.GetRateLimitsResp{Responses: []*pb.RateLimitResp{ok, ok}}, false},
		{"over the limit", &pb.GetRateLimitsResp{Responses: []*pb.RateLimitResp{{Status: pb.Status_OVER_LIMIT}}}, false},
		{"an error", &pb.GetRateLimitsResp{Responses: []*pb.RateLimitResp{{Error: "limit must be 1 to 1000000000"}}}, false},
	} {
		if err := underLimit("peer", tc.res); (err == nil) != tc.good {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

// TestGovbenchCompare runs govbench -compare against a Gubernator-compatible
// API (a governord here) on both protocols and checks that the table has
// the peer and both governords in every cell, and that the chart is drawn.
func TestGovbenchCompare(t *testing.T) {
	ctx := context.Background()
	p, stop, err := StartRateGovernord(ctx, "peer", "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(context.WithoutCancel(ctx)) }()
	svg := t.TempDir() + "/compare.svg"
	var out, errOut bytes.Buffer
	code := Main(ctx, []string{"-compare", p.GRPCAddr, "-compare-http", p.HTTPURL, "-compare-key", p.Key,
		"-compare-callers", "2", "-compare-rounds", "1", "-compare-duration", "50ms", "-compare-svg", svg}, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("exit code %d\n%s", code, errOut.String())
	}
	for _, want := range []string{"peer " + p.GRPCAddr, "governord, memory", "governord, SQLite", "gRPC ", "HTTP JSON "} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the table lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "k/s ("); n != 2*3 {
		t.Fatalf("%d measured cells, want 2 rows of 3:\n%s", n, out.String())
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if n := countElements(t, data, "circle"); n != 2*6 {
		t.Fatalf("the chart has %d points, want 3 peers × 2 protocols in each of 2 panels", n)
	}
}

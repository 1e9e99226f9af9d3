package gubernator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// TestHTTPJSONForms sends the same request in the forms Gubernator's
// gateway accepts and checks the answer is written as the gateway writes
// it: proto field names, every field, 64-bit integers as strings, enums by
// name.
func TestHTTPJSONForms(t *testing.T) {
	want := `{"responses":[{"error":"","limit":"10","metadata":{"owner":"ADDR"},"remaining":"9","reset_time":"1700000000000","retry_after":"0","status":"UNDER_LIMIT"}]}`
	tests := []struct{ name, body string }{
		{"lowerCamel with strings, as in Gubernator's README",
			`{"requests":[{"name":"requests_per_sec","uniqueKey":"account:12345","hits":"1","limit":"10","duration":"1000"}]}`},
		{"proto names with numbers",
			`{"requests":[{"name":"requests_per_sec","unique_key":"account:12345","hits":1,"limit":10,"duration":1000}]}`},
		{"enums by name, unknown fields ignored",
			`{"requests":[{"name":"requests_per_sec","unique_key":"account:12345","hits":1,"limit":10,"duration":1000,"algorithm":"TOKEN_BUCKET","behavior":"BATCHING","future_field":true}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := start(t, under)
			status, got := post(t, f, http.MethodPost, "/v1/GetRateLimits", keyTenant, tt.body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %v", status, got)
			}
			if g, w := jsonOf(t, got), strings.ReplaceAll(want, "ADDR", f.addr); g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
			wantCheck := Check{Name: "requests_per_sec", Key: "account:12345", Hits: 1, Limit: 10, Window: time.Second, Calendar: NoCalendar, Burst: 10}
			if seen := f.lim.seen(); len(seen) != 1 || seen[0] != wantCheck {
				t.Errorf("limiter saw %+v, want %+v", seen, wantCheck)
			}
			if f.record.waited != 1 {
				t.Errorf("answered after waiting for event %d, want 1", f.record.waited)
			}
		})
	}
}

// TestHTTPStatuses checks each verdict's wire form, SCHEDULED with its
// retry_after above all.
func TestHTTPStatuses(t *testing.T) {
	reset := time.UnixMilli(1_700_000_006_000)
	verdicts := map[string]Verdict{
		"a": {Status: pb.Status_UNDER_LIMIT, Limit: 10, Remaining: 0, Reset: reset},
		"b": {Status: pb.Status_SCHEDULED, Limit: 10, Reset: reset, RetryAfter: 6 * time.Second},
		"c": {Status: pb.Status_OVER_LIMIT, Limit: 10, Reset: reset, RetryAfter: 126 * time.Second},
		"d": {Status: pb.Status_NEVER_FITS, Limit: 10},
	}
	f := start(t, func(c Check) (Verdict, error) { return verdicts[c.Key], nil })
	body := `{"requests":[`
	for i, k := range []string{"a", "b", "c", "d"} {
		if i > 0 {
			body += ","
		}
		body += fmt.Sprintf(`{"name":"vendor","unique_key":%q,"hits":1,"limit":10,"duration":60000,"algorithm":"LEAKY_BUCKET","max_wait":"120000"}`, k)
	}
	status, got := post(t, f, http.MethodPost, "/v1/GetRateLimits", keyAdmin, body+"]}")
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, got)
	}
	owner := `"metadata":{"owner":"` + f.addr + `"}`
	want := `{"responses":[` +
		`{"error":"","limit":"10",` + owner + `,"remaining":"0","reset_time":"1700000006000","retry_after":"0","status":"UNDER_LIMIT"},` +
		`{"error":"","limit":"10",` + owner + `,"remaining":"0","reset_time":"1700000006000","retry_after":"6000","status":"SCHEDULED"},` +
		`{"error":"","limit":"10",` + owner + `,"remaining":"0","reset_time":"1700000006000","retry_after":"126000","status":"OVER_LIMIT"},` +
		`{"error":"","limit":"10",` + owner + `,"remaining":"0","reset_time":"0","retry_after":"0","status":"NEVER_FITS"}]}`
	if g := jsonOf(t, got); g != want {
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

// TestHTTPErrorsPerRequest checks that a bad request, or one the limiter
// refuses, is answered in its own error field while the others are served.
func TestHTTPErrorsPerRequest(t *testing.T) {
	f := start(t, func(c Check) (Verdict, error) {
		if c.Key == "refused" {
			return Verdict{}, &RequestError{Message: "limit refused by the limiter."}
		}
		return under(c)
	})
	body := `{"requests":[
		{"name":"n","unique_key":"ok","hits":1,"limit":5,"duration":1000},
		{"name":"n","unique_key":"bad","hits":-1,"limit":5,"duration":1000},
		{"name":"n","unique_key":"refused","hits":1,"limit":5,"duration":1000},
		{"name":"n","unique_key":"ok2","hits":2,"limit":5,"duration":1000}]}`
	status, got := post(t, f, http.MethodPost, "/v1/GetRateLimits", keyTenant, body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, got)
	}
	res := got["responses"].([]any)
	wantErrors := []string{"", "hits must be 0 (read only) or more, got -1: governord does not take hits back.", "limit refused by the limiter.", ""}
	wantRemaining := []string{"4", "0", "0", "3"}
	for i, r := range res {
		m := r.(map[string]any)
		if m["error"] != wantErrors[i] || m["remaining"] != wantRemaining[i] {
			t.Errorf("answer %d: error %q remaining %v; want %q, %s", i, m["error"], m["remaining"], wantErrors[i], wantRemaining[i])
		}
	}
	if n := len(f.lim.seen()); n != 3 {
		t.Errorf("the limiter saw %d checks; want 3, the invalid one never reaching it", n)
	}
}

// TestHTTPCallErrors checks the failures of a whole call, written as the
// gateway writes a status: HTTP status, then code, message and details.
func TestHTTPCallErrors(t *testing.T) {
	one := `{"requests":[{"name":"n","unique_key":"k","hits":1,"limit":5,"duration":1000}]}`
	many := `{"requests":[` + strings.Repeat(`{"name":"n","unique_key":"k"},`, MaxRequests) + `{"name":"n","unique_key":"k"}]}`
	tests := []struct {
		name, method, path, key, body string
		limiterErr                    error
		status                        int
		want                          string
	}{
		{"no credential", http.MethodPost, "/v1/GetRateLimits", "", one, nil, http.StatusUnauthorized,
			`{"code":16,"details":[],"message":"Missing credential: send the header Authorization: Bearer with an API key."}`},
		{"unknown key", http.MethodPost, "/v1/GetRateLimits", "not-a-key-0123456789", one, nil, http.StatusUnauthorized,
			`{"code":16,"details":[],"message":"The API key matches none that governord is configured with."}`},
		{"another tenant's key", http.MethodPost, "/v1/GetRateLimits", keyOther, one, nil, http.StatusForbidden,
			`{"code":7,"details":[],"message":"The key belongs to tenant globex; the rate limits are kept under tenant acme: use its key or the admin key."}`},
		{"not JSON", http.MethodPost, "/v1/GetRateLimits", keyTenant, `{"requests":`, nil, http.StatusBadRequest,
			`{"code":3,"details":[],"message":"the body is not a GetRateLimitsReq in JSON: proto: unexpected EOF"}`},
		{"too many requests", http.MethodPost, "/v1/GetRateLimits", keyTenant, many, nil, http.StatusBadRequest,
			`{"code":11,"details":[],"message":"A GetRateLimits call carries at most 1000 requests; split the list."}`},
		{"wrong method", http.MethodGet, "/v1/GetRateLimits", keyTenant, "", nil, http.StatusNotImplemented,
			`{"code":12,"details":[],"message":"/v1/GetRateLimits takes POST, not GET"}`},
		{"limiter failure", http.MethodPost, "/v1/GetRateLimits", keyTenant, one, errors.New("boom"), http.StatusInternalServerError,
			`{"code":13,"details":[],"message":"internal error: boom"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := start(t, func(c Check) (Verdict, error) {
				if tt.limiterErr != nil {
					return Verdict{}, tt.limiterErr
				}
				return under(c)
			})
			status, got := post(t, f, tt.method, tt.path, tt.key, tt.body)
			// protojson puts a random kind of space in its messages.
			if g := strings.ReplaceAll(jsonOf(t, got), "\u00a0", " "); status != tt.status || g != tt.want {
				t.Errorf("got  %d %s\nwant %d %s", status, g, tt.status, tt.want)
			}
			if tt.method == http.MethodPost {
				var code map[string]any
				_ = json.Unmarshal([]byte(tt.want), &code)
				want := "GetRateLimits " + connect.Code(code["code"].(float64)).String()
				select {
				case o := <-f.observed:
					if o != want {
						t.Errorf("observed %q, want %q", o, want)
					}
				case <-time.After(5 * time.Second):
					t.Errorf("the call was not observed; want %q", want)
				}
			}
		})
	}
}

// TestHTTPHealthCheck checks the health answer before and after Close,
// and that it needs no credential.
func TestHTTPHealthCheck(t *testing.T) {
	f := start(t, under)
	status, got := post(t, f, http.MethodGet, "/v1/HealthCheck", "", "")
	want := `{"advertise_address":"` + f.addr + `","message":"","peer_count":1,"status":"healthy"}`
	if g := jsonOf(t, got); status != http.StatusOK || g != want {
		t.Errorf("got  %d %s\nwant 200 %s", status, g, want)
	}
	f.svc.Close()
	_, got = post(t, f, http.MethodGet, "/v1/HealthCheck", "", "")
	want = `{"advertise_address":"` + f.addr + `","message":"governord is shutting down; retry after it restarts.","peer_count":1,"status":"unhealthy"}`
	if g := jsonOf(t, got); g != want {
		t.Errorf("after Close got  %s\nwant %s", g, want)
	}
	status, got = post(t, f, http.MethodPost, "/v1/GetRateLimits", keyTenant, `{"requests":[]}`)
	if want := `{"code":14,"details":[],"message":"governord is shutting down; retry after it restarts."}`; status != http.StatusServiceUnavailable || jsonOf(t, got) != want {
		t.Errorf("GetRateLimits after Close: %d %s; want 503 %s", status, jsonOf(t, got), want)
	}
}

// batch is a GetRateLimitsReq in JSON of n requests, each with names at
// their longest and metadata of pad bytes, and its size as protobuf.
func batch(t *testing.T, n, pad int) (string, int) {
	t.Helper()
	m := &pb.GetRateLimitsReq{}
	for i := range n {
		m.Requests = append(m.Requests, &pb.RateLimitReq{
			Name: strings.Repeat("n", maxNameBytes), UniqueKey: fmt.Sprintf("%0*d", maxNameBytes, i),
			Hits: 1, Limit: 10, Duration: 1000, Metadata: map[string]string{"m": strings.Repeat("x", pad)},
		})
	}
	out, err := jsonOut.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), proto.Size(m)
}

// A batch of 1,000 requests under the gRPC message limit as protobuf
// passes over HTTP whatever the size of its JSON; one over it, or JSON past
// its own bound, is ResourceExhausted (429), as Gubernator answers.
func TestHTTPBatchLimitIsTheMessageSize(t *testing.T) {
	f := start(t, under)
	fits, fitsSize := batch(t, MaxRequests, 480)
	if fitsSize > maxMessageBytes || len(fits) <= maxMessageBytes {
		t.Fatalf("the batch is %d bytes as protobuf and %d as JSON; the test needs under and over %d", fitsSize, len(fits), maxMessageBytes)
	}
	status, got := post(t, f, http.MethodPost, "/v1/GetRateLimits", keyTenant, fits)
	if responses, _ := got["responses"].([]any); status != http.StatusOK || len(responses) != MaxRequests {
		t.Fatalf("a batch of %d bytes as protobuf: status %d, %d responses", fitsSize, status, len(responses))
	}

	over, overSize := batch(t, MaxRequests, 600)
	status, got = post(t, f, http.MethodPost, "/v1/GetRateLimits", keyTenant, over)
	want := fmt.Sprintf(`{"code":8,"details":[],"message":"the request is %d bytes as protobuf; a call may carry %d, over gRPC as here: split the list"}`, overSize, maxMessageBytes)
	if g := jsonOf(t, got); status != http.StatusTooManyRequests || g != want {
		t.Fatalf("a batch of %d bytes as protobuf: %d %.200s\nwant 429 %s", overSize, status, g, want)
	}

	huge := `{"requests":[{"name":"n","unique_key":"k","hits":1,"limit":10,"duration":1000,"metadata":{"m":"` + strings.Repeat(" ", maxJSONBytes) + `"}}]}`
	status, got = post(t, f, http.MethodPost, "/v1/GetRateLimits", keyTenant, huge)
	if status != http.StatusTooManyRequests || got["code"] != float64(connect.CodeResourceExhausted) {
		t.Fatalf("JSON over %d bytes: %d %.200s", maxJSONBytes, status, jsonOf(t, got))
	}
}

func TestCompactJSON(t *testing.T) {
	got, err := compactJSON([]byte("{\"status\":\"UNDER_LIMIT\", \"limit\":  \"10\",\n \"error\": \"a, b: c\"}"))
	if want := `{"status":"UNDER_LIMIT","limit":"10","error":"a, b: c"}`; err != nil || string(got) != want {
		t.Fatalf("got %s %v, want %s", got, err, want)
	}
}

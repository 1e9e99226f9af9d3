package governor

import (
	"context"
	"strconv"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// BenchmarkConsume compares the SDK's Consume with the same call made
// with the generated client, on the same governord over loopback, each on
// a session of its own, on one task whose quota will not run out. Both
// send a request id, as the SDK always does. The record is kept in memory
// so that no commit hides what the client costs. Each iteration makes one
// call of each kind, in alternating order, so that load elsewhere on the
// machine weighs on both alike; it reports the time of each per call and
// the SDK's overhead in percent.
func BenchmarkConsume(b *testing.B) {
	cfg := testConfig(b.TempDir())
	cfg.DatabaseURL = ""
	g := newGovernordWith(b, cfg)
	c := dial(b, g.addr)
	ctx, tk := task(b, c, Spec{Name: "bench", Quotas: map[string]int64{"req": 1 << 62}})
	api := sessionAPI(b, g.addr)
	n := 0
	ops := [2]func() error{
		func() error {
			n++
			_, err := api.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{
				NodeId: tk.ID(), Resource: "req", Amount: 1, RequestId: "bench-" + strconv.Itoa(n),
			}))
			return err
		},
		func() error {
			_, err := Consume(ctx, "req", 1)
			return err
		},
	}
	api1, sdk1 := alternate(b, ops)
	b.ReportMetric(api1, "api-ns/call")
	b.ReportMetric(sdk1, "sdk-ns/call")
	b.ReportMetric(100*(sdk1-api1)/api1, "sdk-overhead-%")
}

// BenchmarkConsumeThroughAList compares Consume by a client given one
// address with Consume by a client given a list whose first address is
// the same governord and whose second is down: what following a leader
// costs while the leader stays put. Same method as BenchmarkConsume.
func BenchmarkConsumeThroughAList(b *testing.B) {
	cfg := testConfig(b.TempDir())
	cfg.DatabaseURL = ""
	g := newGovernordWith(b, cfg)
	spec := Spec{Name: "bench", Quotas: map[string]int64{"req": 1 << 62}}
	one, _ := task(b, dial(b, g.addr), spec)
	list, _ := task(b, dial(b, g.addr+","+refusing(b)), spec)
	ops := [2]func() error{
		func() error { _, err := Consume(one, "req", 1); return err },
		func() error { _, err := Consume(list, "req", 1); return err },
	}
	one1, list1 := alternate(b, ops)
	b.ReportMetric(one1, "one-ns/call")
	b.ReportMetric(list1, "list-ns/call")
	b.ReportMetric(100*(list1-one1)/one1, "list-overhead-%")
}

// alternate warms both ops, then makes b.N calls of each, in alternating
// order, so that load elsewhere on the machine weighs on both alike, and
// returns the nanoseconds each took per call.
func alternate(b *testing.B, ops [2]func() error) (first, second float64) {
	for _, op := range ops {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	var spent [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for k := range 2 {
			j := (i + k) % 2
			start := time.Now()
			if err := ops[j](); err != nil {
				b.Fatal(err)
			}
			spent[j] += time.Since(start)
		}
	}
	return float64(spent[0]) / float64(b.N), float64(spent[1]) / float64(b.N)
}

// sessionAPI is a raw API client on a session of team-a.
func sessionAPI(b *testing.B, addr string) governorv1connect.GovernorServiceClient {
	key, err := clientconn.Config{Addr: addr, APIKey: teamKey}.API(nil)
	if err != nil {
		b.Fatal(err)
	}
	res, err := key.OpenSession(context.Background(), connect.NewRequest(&governorv1.OpenSessionRequest{}))
	if err != nil {
		b.Fatal(err)
	}
	token := res.Msg.Token
	api, err := clientconn.Config{Addr: addr}.API(func() string { return token })
	if err != nil {
		b.Fatal(err)
	}
	return api
}

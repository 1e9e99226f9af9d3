package governor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"
)

func ExampleDial() {
	addr, stop := exampleGovernord() // a governord for the example
	defer stop()

	// Without options, Dial reads GOVERNOR_ADDR and GOVERNOR_API_KEY.
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey), WithSessionTTL(10*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	fmt.Println("session TTL:", client.TTL())
	// Output: session TTL: 10s
}

func ExampleClient_NewTask() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	ctx, task, err := client.NewTask(context.Background(), Spec{
		Name:     "crawl-site",
		Quotas:   map[string]int64{"http": 500},
		Deadline: time.Now().Add(10 * time.Minute),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A task in the context makes the next one its subtask.
	sub, page, err := NewTask(ctx, Spec{Name: "page-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("subtask:", page.Name())

	// Closing the task ends its subtasks; their contexts say why.
	_ = task.Close()
	<-sub.Done()
	fmt.Println("subtask context ended because its task ended:", errors.Is(context.Cause(sub), ErrTaskEnded))
	// Output:
	// subtask: page-1
	// subtask context ended because its task ended: true
}

func ExampleConsume() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "agent", Quotas: map[string]int64{"tool_calls": 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()

	for range 3 {
		b, err := Consume(ctx, "tool_calls", 1)
		var denied *DeniedError
		if errors.As(err, &denied) {
			fmt.Printf("denied: %s used %d of %d on %q\n", denied.Resource, denied.Used, denied.Limit, denied.NodeName)
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("remaining:", b.Remaining)
	}
	// Output:
	// remaining: 1
	// remaining: 0
	// denied: tool_calls used 2 of 2 on "agent"
}

func ExampleTransport() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "fetch", Quotas: map[string]int64{"http": 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }))
	defer site.Close()

	// One "http" unit and one "http" lease per request.
	httpClient := &http.Client{Transport: Transport(nil)}
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL, nil)
		resp, err := httpClient.Do(req)
		if errors.Is(err, ErrDenied) {
			fmt.Println("second request denied: the http budget is spent")
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close() // returns the lease
		fmt.Println(resp.StatusCode, string(body))
	}
	// Output:
	// 200 hello
	// second request denied: the http budget is spent
}

func ExampleRetry() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "sync", Quotas: map[string]int64{"retry": 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()

	attempts := 0
	err = Retry(ctx, func(context.Context) error {
		attempts++
		return errors.New("upstream timed out")
	}, Backoff(time.Millisecond, 10*time.Millisecond))
	fmt.Println("attempts:", attempts)
	fmt.Println("budget spent:", errors.Is(err, ErrRetryBudget))
	// Output:
	// attempts: 3
	// budget spent: true
}

func ExampleNewGroup() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "crawl", Limits: map[string]int64{ClassAgents: 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()

	// Each function is a subtask that waits for an "agents" lease: two at
	// a time here.
	var crawled atomic.Int64
	g, _ := NewGroup(ctx, ClassAgents)
	for _, page := range []string{"/a", "/b", "/c", "/d", "/e"} {
		g.Go(Spec{Name: page}, func(ctx context.Context) error {
			crawled.Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("crawled:", crawled.Load())
	// Output: crawled: 5
}

func ExampleWait() {
	addr, stop := exampleGovernord() // team-a may call "api" twice a second, one at a time
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "paced"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()

	// Each Wait returns when its call may go: at once, or after sleeping
	// until the slot governord booked for it.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for range 3 {
		b, err := Wait(ctx, "api", 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(b.Status)
	}
	// Two at once exceed the burst of one: no wait helps.
	_, err = Wait(ctx, "api", 2)
	fmt.Println("never fits:", errors.Is(err, ErrNeverFits))
	// Output:
	// admitted
	// scheduled
	// scheduled
	// never fits: true
}

func ExampleClient_Describe() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "report", Quotas: map[string]int64{"tool_calls": 10}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()
	if _, err := Consume(ctx, "tool_calls", 4); err != nil {
		fmt.Println(err)
		return
	}
	lease, err := Acquire(ctx, ClassAgents)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lease.Release(Report{})

	n, err := client.Describe(ctx, task.ID())
	if err != nil {
		fmt.Println(err)
		return
	}
	tc, agents := n.Resources["tool_calls"], n.Classes[ClassAgents]
	fmt.Printf("%s is %s: tool_calls %d of %d, %d agents lease held\n", n.Name, n.State, tc.Used, tc.Cap, agents.Held)
	// Output: report is active: tool_calls 4 of 10, 1 agents lease held
}

func ExampleClient_Children() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "crawl"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()
	for _, site := range []string{"docs", "blog", "shop"} {
		if _, _, err := NewTask(ctx, Spec{Name: site}); err != nil {
			fmt.Println(err)
			return
		}
	}

	// Two children a page: however wide the node, no answer holds more.
	for child, err := range client.Children(ctx, task.ID(), 2) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(child.Name, child.State)
	}
	// Output:
	// docs active
	// blog active
	// shop active
}

func ExampleLease_Done() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "holder"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()
	lease, err := Acquire(ctx, ClassAgents, WithMaxHold(100*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Work until the lease ends, whatever ends it, without polling Validate.
	select {
	case <-lease.Done():
		fmt.Println("stopped:", errors.Is(lease.Err(), ErrLeaseLost))
	case <-time.After(time.Minute):
		fmt.Println("the work finished first")
	}
	// Output: stopped: true
}

func ExampleWithRequestID() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "jobs", Quotas: map[string]int64{"tool_calls": 10}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()
	// A job retried by the caller repeats its id: charged once.
	for range 3 {
		b, err := Consume(WithRequestID(ctx, "job-42"), "tool_calls", 2)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("remaining:", b.Remaining)
	}
	// Output:
	// remaining: 8
	// remaining: 8
	// remaining: 8
}

func ExampleNoWait() {
	addr, stop := exampleGovernord()
	defer stop()
	client, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx, task, err := client.NewTask(context.Background(), Spec{Name: "try", Limits: map[string]int64{ClassAgents: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer task.Close()
	first, err := Acquire(ctx, ClassAgents, NoWait())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer first.Release(Report{})
	// The only slot is held: the answer comes at once, without waiting.
	_, err = Acquire(ctx, ClassAgents, NoWait())
	fmt.Println("denied at once:", errors.Is(err, ErrDenied))
	// Output: denied at once: true
}

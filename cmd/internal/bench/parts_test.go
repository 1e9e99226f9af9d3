package bench

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDownstreamShedsBeyondItsCapacity(t *testing.T) {
	for _, tc := range []struct {
		name      string
		capacity  int64
		callers   int
		served    int64
		shedAtMin int64
	}{
		{"within capacity", 4, 4, 4, 0},
		{"beyond capacity", 2, 6, 2, 4},
		{"down", 0, 3, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := StartDownstream(DownstreamOptions{Capacity: tc.capacity, Base: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			hc := newHTTPClient()
			var wg sync.WaitGroup
			for range tc.callers {
				wg.Go(func() {
					if _, err := call(context.Background(), hc, svc.URL()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			c := svc.Counts()
			if c.Served != tc.served || c.Shed != int64(tc.callers)-tc.served || c.Sent() != int64(tc.callers) {
				t.Fatalf("counts %+v, want %d served and %d shed", c, tc.served, int64(tc.callers)-tc.served)
			}
		})
	}
}

func TestDownstreamCapacityChangesAtRunTime(t *testing.T) {
	svc, err := StartDownstream(DownstreamOptions{Capacity: 1, Base: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	hc := newHTTPClient()
	served, err := call(context.Background(), hc, svc.URL())
	if err != nil || !served {
		t.Fatalf("served %v, %v with capacity 1", served, err)
	}
	svc.SetCapacity(0)
	if served, err = call(context.Background(), hc, svc.URL()); err != nil || served {
		t.Fatalf("served %v, %v with capacity 0", served, err)
	}
	svc.Reset()
	if c := svc.Counts(); c != (Counts{}) {
		t.Fatalf("counts %+v after Reset", c)
	}
}

func TestDownstreamServedAtLeastCountsSinceReset(t *testing.T) {
	svc, err := StartDownstream(DownstreamOptions{Capacity: 1, Base: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	hc := newHTTPClient()
	serve := func() {
		t.Helper()
		if served, err := call(context.Background(), hc, svc.URL()); err != nil || !served {
			t.Fatalf("served %v, %v with capacity 1", served, err)
		}
	}
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	serve()
	svc.Reset()
	two := svc.ServedAtLeast(2)
	serve()
	if closed(two) {
		t.Fatal("the wait for 2 served ended after 1 since the Reset")
	}
	svc.SetCapacity(0)
	if served, err := call(context.Background(), hc, svc.URL()); err != nil || served {
		t.Fatalf("served %v, %v with capacity 0", served, err)
	}
	if closed(two) {
		t.Fatal("the wait for 2 served ended on a shed request")
	}
	svc.SetCapacity(1)
	serve()
	if !closed(two) {
		t.Fatal("the wait for 2 served still open after 2")
	}
	if !closed(svc.ServedAtLeast(2)) {
		t.Fatal("a wait for a count already reached is not over at once")
	}
}

func TestFIFOGrantsInArrivalOrder(t *testing.T) {
	f := newFIFO(1)
	if got := f.acquire(); got != 1 {
		t.Fatalf("first grant %d", got)
	}
	orders := make([]chan uint64, 3)
	for i := range orders {
		orders[i] = make(chan uint64, 1)
		go func() { orders[i] <- f.acquire() }()
		for f.queued() != i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	for i := range orders {
		f.release()
		if got := <-orders[i]; got != uint64(i+2) {
			t.Fatalf("waiter %d got grant %d, want %d", i, got, i+2)
		}
	}
}

func TestFlagsWithMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-run", "("}, "-run \"(\" is not a regular expression"},
		{[]string{"-database-url", "sqlite:x.db"}, "-database-url must be a PostgreSQL URL"},
		{[]string{"-metrics-url", "http://127.0.0.1:7601/metrics"}, "-metrics-url is for a governord at -addr"},
		{[]string{"-addr", "127.0.0.1:7600", "-admin-key", ""}, "needs its admin key"},
		{[]string{"-addr", "nowhere"}, "is not host:port"},
		{[]string{"extra"}, "unexpected argument \"extra\""},
		{[]string{"-compare-http", "http://127.0.0.1:1050"}, "-compare-http needs -compare"},
		{[]string{"-compare", "127.0.0.1:1051", "-addr", "127.0.0.1:7600"}, "leave -addr out"},
		{[]string{"-compare", "127.0.0.1:1051", "-compare-callers", "16,0"}, "each entry must be a positive whole number"},
		{[]string{"-compare", "127.0.0.1:1051", "-compare-http", "127.0.0.1:1050"}, "must be a URL starting with http://"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Setenv("GOVERNOR_ADMIN_KEY", "")
			var out, errOut bytes.Buffer
			if code := Main(context.Background(), tc.args, &out, &errOut); code != ExitUsage {
				t.Fatalf("exit code %d, want %d\n%s", code, ExitUsage, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.want) {
				t.Fatalf("stderr lacks %q:\n%s", tc.want, errOut.String())
			}
		})
	}
}

func TestSizesOutOfRange(t *testing.T) {
	sz := Reduced()
	sz.CrashTTL, sz.FloodPool = 500*time.Millisecond, 0
	err := Options{Dir: t.TempDir(), Sizes: sz}.check()
	for _, want := range []string{"CrashTTL must be at least 1s", "FloodPool must be at least 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v lacks %q", err, want)
		}
	}
}

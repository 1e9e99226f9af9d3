// Command load is the shortest complete program using the Governor SDK:
// jobs fan out under an "agents" lease, spend a shared http budget on a
// simulated service, queue for "db" leases to store what they fetched, and
// the run ends with how the service behaved.
//
//	go run ./examples/load -workers 8 -budget 200
//
// It reads GOVERNOR_ADDR and GOVERNOR_API_KEY like every client.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"governor.dev/governor"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

// run is the program; it returns the exit code: 2 for bad flags, 1 when
// governord refuses the run.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workers := fs.Int("workers", 8, "jobs running at once (the task's agents limit), at least 1")
	budget := fs.Int64("budget", 200, "http requests the whole run may make (the task's http quota), at least 1")
	jobs := fs.Int("jobs", 20, "jobs to run, at least 1")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *workers < 1 || *budget < 1 || *jobs < 1 {
		fmt.Fprintf(stderr, "load: -workers (%d), -budget (%d) and -jobs (%d) must each be at least 1\n", *workers, *budget, *jobs)
		return 2
	}
	if err := load(ctx, *workers, *budget, *jobs, stdout); err != nil {
		fmt.Fprintln(stderr, "load:", err)
		return 1
	}
	return 0
}

func load(ctx context.Context, workers int, budget int64, jobs int, out io.Writer) error {
	svc := startService()
	defer svc.Close()
	client, err := governor.Dial(ctx)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, task, err := client.NewTask(ctx, governor.Spec{
		Name:   fmt.Sprintf("load-%d", time.Now().UnixNano()),
		Quotas: map[string]int64{governor.ResourceHTTP: budget},
		Limits: map[string]int64{governor.ClassAgents: int64(workers), governor.ClassDB: 2},
	})
	if err != nil {
		return err
	}
	defer task.Close()

	hc := &http.Client{Transport: governor.Transport(nil)}
	var db store
	g, _ := governor.NewGroup(ctx, governor.ClassAgents)
	for i := range jobs {
		g.Go(governor.Spec{Name: fmt.Sprintf("job-%d", i)}, func(ctx context.Context) error {
			return job(ctx, hc, svc.URL, &db)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	svc.report(out, budget, workers, jobs)
	db.report(out)
	return nil
}

// job fetches pages until the budget is spent, retrying what the service
// refuses, and stores each page under a db lease.
func job(ctx context.Context, hc *http.Client, url string, db *store) error {
	for page := range 10 {
		err := governor.Retry(ctx, func(ctx context.Context) error { return fetch(ctx, hc, url) },
			governor.Attempts(3), governor.Backoff(time.Millisecond, 20*time.Millisecond))
		if errors.Is(err, governor.ErrDenied) {
			return nil // the http budget is spent: the run is over for this job
		}
		if err != nil {
			continue
		}
		if err := governor.Do(ctx, governor.ClassDB, func(context.Context) error { return db.write(page) }); err != nil {
			return err
		}
	}
	return nil
}

func fetch(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("service answered %s", resp.Status)
	}
	return nil
}

package server

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/stallbench"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// wideClientEnv, set, makes the test binary BenchmarkWideTenantOverTheAPI's
// wide tenant, a program of its own as a tenant is: for each line "URL
// TOKEN NODE" on its standard input it pages through NODE's children over
// the API at URL, with session token TOKEN, and cancels NODE, then answers
// with a line giving how many children it read, or "error: " and what went
// wrong.
const wideClientEnv = "GOVERNOR_STALL_WIDE_CLIENT"

// wideClient is the wide tenant's program; it returns the exit code.
func wideClient() int {
	in, hc := bufio.NewScanner(os.Stdin), h2cClient()
	for in.Scan() {
		var url, token string
		var node uint64
		read, err := 0, error(nil)
		if _, err = fmt.Sscan(in.Text(), &url, &token, &node); err == nil {
			client := governorv1connect.NewGovernorServiceClient(hc, url, connect.WithInterceptors(bearerAuth(token)))
			read, err = describeAndCancel(context.Background(), client, node)
		}
		if err != nil {
			fmt.Println("error:", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Println(read)
		}
	}
	return 0
}

// describeAndCancel reads every page of node's children, as a screen
// scrolling through them would, cancels node and returns how many children
// the pages held.
func describeAndCancel(ctx context.Context, client governorv1connect.GovernorServiceClient, node uint64) (int, error) {
	read := 0
	if err := eachPage(ctx, client, node, 0, func(kids []*governorv1.NodeInfo) error {
		read += len(kids)
		return nil
	}); err != nil {
		return read, err
	}
	_, err := client.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: node}))
	return read, err
}

// eachPage reads node's children page by page, size children a page (0:
// the default), and hands each page to each, stopping at its first error.
func eachPage(ctx context.Context, client governorv1connect.GovernorServiceClient, node uint64, size uint32, each func([]*governorv1.NodeInfo) error) error {
	for cursor := uint64(0); ; {
		res, err := client.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: node, IncludeChildren: true, Cursor: cursor, PageSize: size}))
		if err != nil {
			return err
		}
		if err := each(res.Msg.Children); err != nil {
			return err
		}
		if cursor = res.Msg.NextCursor; cursor == 0 {
			return nil
		}
	}
}

// startProgram starts the test binary again as a program of its own, with
// env (NAME=VALUE) added to its environment, which TestMain turns into one
// of the stall benchmarks' tenants; its standard error is this process's.
func startProgram(env string) (cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser, err error) {
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	if in, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, err
	}
	if out, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, out, cmd.Start()
}

// quietClientEnv, set to "URL TOKEN TASK PERIOD", makes the test binary
// the quiet tenant of the stall benchmarks, a program of its own as a
// tenant is: it consumes 1 of "req" on TASK every PERIOD over the API at
// URL as the session of TOKEN (stallbench.Probes), writing each answer on
// its standard output (stallbench.WriteAnswers), until its standard input
// ends.
const quietClientEnv = "GOVERNOR_STALL_QUIET_CLIENT"

// quietClient is the quiet tenant's program; it returns the exit code.
func quietClient(args string) int {
	var url, token, every string
	var task uint64
	_, err := fmt.Sscan(args, &url, &token, &task, &every)
	period, perr := time.ParseDuration(every)
	if err = cmp.Or(err, perr); err != nil || period <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q: want URL TOKEN TASK PERIOD, PERIOD a positive duration: %v\n", quietClientEnv, args, err)
		return 2
	}
	client := governorv1connect.NewGovernorServiceClient(h2cClient(), url, connect.WithInterceptors(bearerAuth(token)))
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	stallbench.Probes(period, consumeProbe(client, task))(stop, stallbench.WriteAnswers(os.Stdout))
	return 0
}

// quietProber is the stallbench.Prober whose probes are the quiet tenant's
// program (quietClientEnv) consuming on task every period over the API at
// url as the session of token.
func quietProber(b testing.TB, url, token string, task uint64, period time.Duration) stallbench.Prober {
	return func(stop <-chan struct{}, done stallbench.Answered) {
		cmd, in, out, err := startProgram(fmt.Sprintf("%s=%s %s %d %s", quietClientEnv, url, token, task, period))
		if err != nil {
			b.Errorf("start the quiet tenant's program: %v", err)
			return
		}
		go func() {
			<-stop
			in.Close()
		}()
		if err := stallbench.ReadAnswers(out, done); err != nil {
			b.Errorf("the quiet tenant's program: %v", err)
		}
		if err := cmd.Wait(); err != nil {
			b.Errorf("the quiet tenant's program: %v", err)
		}
	}
}

// wideProcess is the wide tenant's program running beside the benchmark.
type wideProcess struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

// startWideClient starts the wide tenant's program; it ends with b.
func startWideClient(b *testing.B) *wideProcess {
	cmd, in, out, err := startProgram(wideClientEnv + "=1")
	if err != nil {
		b.Fatalf("start the wide tenant's program: %v", err)
	}
	b.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("the wide tenant's program: %v", err)
		}
	})
	return &wideProcess{in: in, out: bufio.NewScanner(out)}
}

// describeAndCancel has the program page through node's children and
// cancel it over the API at url as the session of token, and returns how
// many children it read.
func (p *wideProcess) describeAndCancel(url, token string, node uint64) (int, error) {
	if _, err := fmt.Fprintln(p.in, url, token, node); err != nil {
		return 0, err
	}
	if !p.out.Scan() {
		return 0, fmt.Errorf("the wide tenant's program ended: %v", p.out.Err())
	}
	line := p.out.Text()
	if msg, ok := strings.CutPrefix(line, "error: "); ok {
		return 0, fmt.Errorf("the wide tenant's program: %s", msg)
	}
	return strconv.Atoi(line)
}

// TestQuietTenantProgramProbes runs the quiet tenant's program against
// governord until 20 of its consumes have answered, once with a session's
// token and once with a token that is no session's: the first's consumes
// all succeed and charge the task, the second's all fail, and the failure
// reaches this process.
func TestQuietTenantProgramProbes(t *testing.T) {
	e, cl, task := benchEnv(t, "")
	_, sess := e.session(keyA)
	const enough = 20
	probe := func(token string) (answers int, failures []error) {
		stop := make(chan struct{})
		var once sync.Once
		end := func() { once.Do(func() { close(stop) }) }
		defer time.AfterFunc(time.Minute, end).Stop()
		var last time.Time
		quietProber(t, e.http.URL, token, task, 5*time.Millisecond)(stop, func(s stallbench.Sample, err error, before time.Time) {
			answers++
			if err != nil {
				failures = append(failures, err)
			}
			if before.Before(last) {
				t.Errorf("answer %d says every probe before %v has answered, after one that said %v", answers, before, last)
			}
			last = before
			if answers == enough {
				end()
			}
		})
		return answers, failures
	}
	answers, failures := probe(sess.Token)
	if answers < enough || len(failures) > 0 {
		t.Fatalf("with a session's token, %d answers, failures %v; want at least %d, none failed", answers, failures, enough)
	}
	node, err := cl.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: task}))
	if err != nil {
		t.Fatal(err)
	}
	if used := node.Msg.Node.Resources["req"].GetUsed(); used != int64(answers) {
		t.Errorf("the task used %d of req after %d consumes of 1", used, answers)
	}
	answers, failures = probe("no-such-token")
	if answers < enough || len(failures) != answers || !strings.Contains(failures[0].Error(), "unauthenticated") {
		t.Fatalf("with a token that is no session's, %d answers and failures %v; want every answer unauthenticated", answers, failures)
	}
}

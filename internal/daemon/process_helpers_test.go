package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"governor.dev/governor/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// governordBinary builds cmd/governord once per test binary.
func governordBinary(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, "governor.dev/governor/cmd/governord")
}

// proc is a governord running as a process of its own.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	api    chan string   // the API's base URL, once it serves
	exited chan struct{} // closed when the process has ended
	code   int           // its exit code, -1 if a signal ended it; read after exited

	mu     sync.Mutex // guards the output below
	stdout strings.Builder
	stderr strings.Builder
}

// Lines that say where the API is: the JSON log's "serving" line, or
// development mode's welcome.
var welcomeAPI = regexp.MustCompile(`^\s+API\s+(http\S+)`)

// startProc runs governord with args in dir. It is killed when t ends, if
// it is still running.
func startProc(t *testing.T, dir string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, api: make(chan string, 1), exited: make(chan struct{})}
	p.cmd = exec.Command(governordBinary(t), args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	stdout, err := p.cmd.StdoutPipe()
	must(t, err)
	stderr, err := p.cmd.StderrPipe()
	must(t, err)
	must(t, p.cmd.Start())
	var readers sync.WaitGroup
	readers.Add(2)
	go p.read(&readers, stdout, &p.stdout)
	go p.read(&readers, stderr, &p.stderr)
	go func() {
		readers.Wait()
		err := p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if err != nil && p.code == 0 {
			p.code = -1
		}
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *proc) read(wg *sync.WaitGroup, r io.Reader, into *strings.Builder) {
	defer wg.Done()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		into.WriteString(line + "\n")
		p.mu.Unlock()
		if url := servingURL(line); url != "" {
			select {
			case p.api <- url:
			default:
			}
		}
	}
}

func servingURL(line string) string {
	if m := welcomeAPI.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	var rec struct {
		Msg string `json:"msg"`
		API string `json:"api"`
	}
	if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
		return rec.API
	}
	return ""
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "stdout:\n" + p.stdout.String() + "stderr:\n" + p.stderr.String()
}

// stdoutUntil waits until standard output holds last, and returns it.
func (p *proc) stdoutUntil(last string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.mu.Lock()
		out := p.stdout.String()
		p.mu.Unlock()
		if strings.Contains(out, last) {
			return out
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("standard output lacks %q after 30s\n%s", last, p.output())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serving waits until the process serves and returns the API's base URL.
func (p *proc) serving() string {
	p.t.Helper()
	select {
	case url := <-p.api:
		return url
	case <-p.exited:
		p.t.Fatalf("governord exited with %d before serving\n%s", p.code, p.output())
	case <-time.After(60 * time.Second):
		p.t.Fatalf("governord does not serve after a minute\n%s", p.output())
	}
	return ""
}

// wait waits for the process to end and returns its exit code.
func (p *proc) wait(within time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(within):
		p.t.Fatalf("governord still runs after %s\n%s", within, p.output())
	}
	return 0
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	must(p.t, p.cmd.Process.Signal(sig))
}

// writeConfig writes a governord configuration file in dir: loopback on
// port 0, metrics off, JSON logs, one tenant, the record at url.
func writeConfig(t *testing.T, dir, url string) string {
	t.Helper()
	path := filepath.Join(dir, "governor.yaml")
	yaml := fmt.Sprintf(`listen: 127.0.0.1:0
metrics_listen: "off"
database_url: %q
admin_key: %s
tenants:
  - name: team-a
    api_key: %s
    quotas: {http: 100000000}
reap_interval: 100ms
log: {format: json}
`, url, testAdminKey, testTeamKey)
	must(t, os.WriteFile(path, []byte(yaml), 0o600))
	return path
}

// load runs workers that each consume one unit at a time on a node of
// their own, through the JSON API with the tenant's key, counting what was
// acknowledged and what was sent.
type load struct {
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu    sync.Mutex       // guards the maps below
	acked map[uint64]int64 // node: consumes answered 200
	sent  map[uint64]int64 // node: consumes sent, answered or not
	first chan struct{}    // closed at the first acknowledgment
	once  sync.Once
}

func startLoad(t *testing.T, base string, workers int) *load {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel, acked: map[uint64]int64{}, sent: map[uint64]int64{}, first: make(chan struct{})}
	api := newJSONAPI(base)
	for w := range workers {
		node, err := api.ensure(ctx, testTeamKey, fmt.Sprintf("worker-%d", w))
		must(t, err)
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for ctx.Err() == nil {
				l.mu.Lock()
				l.sent[node]++
				l.mu.Unlock()
				if err := api.consume(ctx, testTeamKey, node, "http", 1); err != nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				l.mu.Lock()
				l.acked[node]++
				l.mu.Unlock()
				l.once.Do(func() { close(l.first) })
			}
		}()
	}
	return l
}

// stop ends the workers and returns what they counted.
func (l *load) stop() (acked, sent map[uint64]int64) {
	l.cancel()
	l.done.Wait()
	return l.acked, l.sent
}

// verifyOnRecord checks, through a fresh governord's API, that every
// acknowledged consume is on record and that nothing was charged that was
// not sent.
func verifyOnRecord(t *testing.T, base string, acked, sent map[uint64]int64) {
	t.Helper()
	ctx := context.Background()
	api := newJSONAPI(base)
	admin, err := api.session(ctx, testAdminKey)
	must(t, err)
	total := int64(0)
	for node, n := range acked {
		res, err := api.node(ctx, admin, node)
		must(t, err)
		used := res["http"].Used
		if used < n || used > sent[node] {
			t.Errorf("node %d: %d used on record; %d consumes were acknowledged and %d sent", node, used, n, sent[node])
		}
		total += n
	}
	if total == 0 {
		t.Fatal("nothing was acknowledged: the test proves nothing")
	}
	t.Logf("%d acknowledged consumes on %d nodes, all on record", total, len(acked))
}

package testbin

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Proc is governord running as a process of its own, its output kept.
type Proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	api    chan string   // the API's base URL, once it serves
	exited chan struct{} // closed when the process has ended
	code   int           // its exit code, -1 if a signal ended it; read after exited

	mu     sync.Mutex // guards the output below
	stdout strings.Builder
	stderr strings.Builder
}

// welcomeAPI finds the API in development mode's welcome; otherwise the
// JSON log's "serving" line says where it is.
var welcomeAPI = regexp.MustCompile(`^\s+API\s+(http\S+)`)

// Start runs the governord binary bin with args in dir, with env added to
// this process's environment. It is killed when t ends, if it still runs.
func Start(t testing.TB, bin, dir string, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, api: make(chan string, 1), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
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

func (p *Proc) read(wg *sync.WaitGroup, r io.Reader, into *strings.Builder) {
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

// Output is everything the process wrote so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "stdout:\n" + p.stdout.String() + "stderr:\n" + p.stderr.String()
}

// StdoutUntil waits until standard output holds last, and returns it.
func (p *Proc) StdoutUntil(last string) string {
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
			p.t.Fatalf("standard output lacks %q after 30s\n%s", last, p.Output())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Serving waits until the process serves and returns the API's base URL.
func (p *Proc) Serving() string {
	p.t.Helper()
	select {
	case url := <-p.api:
		return url
	case <-p.exited:
		p.t.Fatalf("governord exited with %d before serving\n%s", p.code, p.Output())
	case <-time.After(60 * time.Second):
		p.t.Fatalf("governord does not serve after a minute\n%s", p.Output())
	}
	return ""
}

// Wait waits for the process to end and returns its exit code.
func (p *Proc) Wait(within time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(within):
		p.t.Fatalf("governord still runs after %s\n%s", within, p.Output())
	}
	return 0
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

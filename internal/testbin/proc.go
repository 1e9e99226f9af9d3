package testbin

import (
	"bufio"
	"encoding/json"
	"fmt"
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
	t      testing.TB // nil for a process Launch started
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
	p, err := Launch(bin, dir, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	p.t = t
	t.Cleanup(p.Kill)
	return p
}

// Launch is Start for code that has no test at hand, such as an Example:
// the caller ends the process, with Stop or Kill, and reads its state with
// the methods that return errors (URL, Exit) rather than those that fail a
// test.
func Launch(bin, dir string, env []string, args ...string) (*Proc, error) {
	p := &Proc{api: make(chan string, 1), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
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
	return p, nil
}

// Kill ends the process with SIGKILL, if it still runs, and waits for it.
func (p *Proc) Kill() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Stop asks the process to stop with SIGTERM and waits for it, at most
// within; it fails unless the process exits 0 in time.
func (p *Proc) Stop(within time.Duration) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	code, err := p.Exit(within)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("governord exited with %d after SIGTERM\n%s", code, p.Output())
	}
	return nil
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

// URL waits, at most within, until the process serves, and returns the
// API's base URL.
func (p *Proc) URL(within time.Duration) (string, error) {
	select {
	case url := <-p.api:
		return url, nil
	case <-p.exited:
		return "", fmt.Errorf("governord exited with %d before serving\n%s", p.code, p.Output())
	case <-time.After(within):
		return "", fmt.Errorf("governord does not serve after %s\n%s", within, p.Output())
	}
}

// Serving waits until the process serves and returns the API's base URL.
func (p *Proc) Serving() string {
	p.t.Helper()
	url, err := p.URL(time.Minute)
	if err != nil {
		p.t.Fatal(err)
	}
	return url
}

// Exit waits, at most within, for the process to end and returns its exit
// code, -1 if a signal ended it.
func (p *Proc) Exit(within time.Duration) (int, error) {
	select {
	case <-p.exited:
		return p.code, nil
	case <-time.After(within):
		return 0, fmt.Errorf("governord still runs after %s\n%s", within, p.Output())
	}
}

// Wait waits for the process to end and returns its exit code.
func (p *Proc) Wait(within time.Duration) int {
	p.t.Helper()
	code, err := p.Exit(within)
	if err != nil {
		p.t.Fatal(err)
	}
	return code
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

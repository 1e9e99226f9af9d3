package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"governor.dev/governor/cmd/internal/daemon"
)

// GovernordEnv, set to 1 in a process's environment, makes a program that
// calls ServeGovernord first thing run governord instead of itself. The
// restart scenario starts governord so, as a process of its own that it can
// kill, from the benchmark's own executable.
const GovernordEnv = "GOVBENCH_GOVERNORD"

// ServeGovernord runs governord with the process's arguments, as
// cmd/governord does, and returns its exit code and true when GovernordEnv
// is 1; otherwise it returns false at once.
func ServeGovernord() (int, bool) {
	if os.Getenv(GovernordEnv) != "1" {
		return 0, false
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return daemon.Main(ctx, os.Args[1:], os.Stdout, os.Stderr), true
}

// proc is governord running as a process of its own.
type proc struct {
	cmd    *exec.Cmd
	api    chan string   // the API's base URL, once it serves
	exited chan struct{} // closed when the process has ended

	mu  sync.Mutex // guards log
	log strings.Builder
}

// startProc runs governord with args: command (nil: this executable) with
// GovernordEnv=1 in its environment.
func startProc(command []string, args ...string) (*proc, error) {
	if len(command) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find this executable to run governord: %w", err)
		}
		command = []string{self}
	}
	p := &proc{api: make(chan string, 1), exited: make(chan struct{})}
	p.cmd = exec.Command(command[0], append(command[1:len(command):len(command)], args...)...)
	p.cmd.Env = append(os.Environ(), GovernordEnv+"=1")
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start governord: %w", err)
	}
	go func() {
		p.read(stderr)
		_ = p.cmd.Wait() // the exit status is not needed: kill and stop say what they expect
		close(p.exited)
	}()
	return p, nil
}

// read keeps governord's log and announces the API's URL from its
// "serving" line.
func (p *proc) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.log.WriteString(line + "\n")
		p.mu.Unlock()
		var rec struct {
			Msg string `json:"msg"`
			API string `json:"api"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
			select {
			case p.api <- rec.API:
			default:
			}
		}
	}
}

// serving waits until governord serves and returns the API's base URL.
func (p *proc) serving(within time.Duration) (string, error) {
	select {
	case url := <-p.api:
		return url, nil
	case <-p.exited:
		return "", fmt.Errorf("%w: governord exited before serving:\n%s", ErrUnexpected, p.output())
	case <-time.After(within):
		return "", fmt.Errorf("%w: governord does not serve after %s:\n%s", ErrUnexpected, within, p.output())
	}
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// signal sends sig and waits for the process to end.
func (p *proc) signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal governord: %w", err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%w: governord still ran 30s after %s", ErrUnexpected, sig)
	}
}

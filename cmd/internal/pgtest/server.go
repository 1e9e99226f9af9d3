package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// server is a throwaway PostgreSQL cluster in a temporary directory.
type server struct {
	bin      string    // the directory of initdb, pg_ctl and postgres
	dir      string    // the cluster's directory, removed at stop
	dsn      string    // the URL of its database "postgres"
	watchdog *exec.Cmd // stops the server if the test binary dies
}

// serverGlob finds the server binaries of every installed version.
var serverGlob = "/usr/lib/postgresql/*/bin/initdb"

// serverBin returns the newest installed PostgreSQL server binaries'
// directory, "" if there are none.
func serverBin() string {
	found, _ := filepath.Glob(serverGlob)
	if len(found) == 0 {
		return ""
	}
	slices.SortFunc(found, func(a, b string) int { return version(a) - version(b) })
	return filepath.Dir(found[len(found)-1])
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

func startServer(bin string) (*server, error) {
	dir, err := os.MkdirTemp("", "governor-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &server{bin: bin, dir: dir}
	if err := s.init(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var errs []error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		if err = s.start(port); err == nil {
			s.dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			return s, s.watch()
		}
		errs = append(errs, err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
	os.RemoveAll(dir)
	return nil, fmt.Errorf("start a throwaway PostgreSQL: %w\n%s", errors.Join(errs...), log)
}

func (s *server) init() error {
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root needs the OS user postgres to run the server: %w", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return err
		}
	}
	out, err := s.asPostgres(filepath.Join(s.bin, "initdb"), "-D", s.data(), "-U", "postgres",
		"-A", "trust", "-E", "UTF8", "--no-locale", "-N").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

func (s *server) start(port int) error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s", port, s.dir)
	out, err := s.asPostgres(filepath.Join(s.bin, "pg_ctl"), "-D", s.data(), "-l", filepath.Join(s.dir, "server.log"),
		"-w", "-t", "60", "-s", "-o", opts, "start").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl start on port %d: %w\n%s", port, err, out)
	}
	return nil
}

// watch starts a process that stops the server once the test binary is
// gone, however it ended.
func (s *server) watch() error {
	stop := shellQuote(s.asPostgres(filepath.Join(s.bin, "pg_ctl"), "-D", s.data(), "-m", "immediate", "-w", "stop").Args)
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 1; done; %s >/dev/null 2>&1; rm -rf %s",
		os.Getpid(), stop, shellQuote([]string{s.dir}))
	s.watchdog = exec.Command("/bin/sh", "-c", script)
	s.watchdog.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := s.watchdog.Start(); err != nil {
		return errors.Join(fmt.Errorf("start the watchdog: %w", err), s.stop())
	}
	return nil
}

func (s *server) stop() error {
	out, err := s.asPostgres(filepath.Join(s.bin, "pg_ctl"), "-D", s.data(), "-m", "fast", "-w", "-t", "60", "stop").CombinedOutput()
	if err != nil {
		err = fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	if s.watchdog != nil {
		s.watchdog.Process.Kill()
		s.watchdog.Wait()
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

func (s *server) data() string { return filepath.Join(s.dir, "data") }

// asPostgres runs name as the OS user postgres when running as root (the
// server refuses to run as root), as the current user otherwise.
func (s *server) asPostgres(name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	} else {
		cmd = exec.Command(name, args...)
	}
	cmd.Dir = "/"
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// shellQuote joins args as one /bin/sh command line.
func shellQuote(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

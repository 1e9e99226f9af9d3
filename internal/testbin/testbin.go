// Package testbin builds the project's commands for tests that run them as
// processes of their own: each command once per test binary, into a
// directory that Main removes when the tests end. The commands live in the
// module governor.dev/governor/cmd, so a build from the SDK's module finds
// them through the repository's go.work. Start runs governord so built and
// follows its output; Path and Launch do the same for code without a test
// at hand, such as an Example.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	dir   string                // made by the first Build
	built = map[string]string{} // import path to binary
	fails = map[string]error{}  // import path to why it did not build
)

// Build returns the path of the command at import path pkg, built with go
// build the first time a test of this binary asks for it, with the race
// detector when the tests have it: the command is checked for races too,
// and its build shares the packages the tests compiled. A failed build
// fails every test that asks. With -short the test is skipped instead: it
// builds and runs a real process.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs " + path.Base(pkg) + " as a process")
	}
	bin, err := Path(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Path is Build for code that has no test at hand, such as an Example, and
// for tests that must run under -short too: it never skips, and returns
// why the command did not build.
func Path(pkg string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if bin, ok := built[pkg]; ok {
		return bin, nil
	}
	if err, ok := fails[pkg]; ok {
		return "", err
	}
	bin, err := build(pkg)
	if err != nil {
		fails[pkg] = err
		return "", err
	}
	built[pkg] = bin
	return bin, nil
}

func build(pkg string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "governor-testbin-")
		if err != nil {
			return "", err
		}
		dir = d
	}
	bin := filepath.Join(dir, path.Base(pkg))
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Main runs the tests and removes what Build made. Call it from TestMain:
// os.Exit(testbin.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
	return code
}

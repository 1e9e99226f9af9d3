package testbin

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestBuildFollowsTheRaceDetector: a command is built with the race
// detector exactly when the tests run with it.
func TestBuildFollowsTheRaceDetector(t *testing.T) {
	bin := Build(t, "governor.dev/governor/cmd/governord")
	out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if got := strings.Contains(string(out), "-race=true"); got != race {
		t.Fatalf("governord built with the race detector: %v; the tests run with it: %v\n%s", got, race, out)
	}
}

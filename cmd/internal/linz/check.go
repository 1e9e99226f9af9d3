package linz

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// VisualizeDirEnv names the environment variable that, when set, is the
// directory Check writes visualisations into instead of the test's
// temporary directory (which is removed when the test ends).
const VisualizeDirEnv = "GOVERNOR_LINZ_DIR"

// Check reports whether history is linearizable under model, within timeout.
// When it is not, or the checker runs out of time, it marks t failed with
// Errorf, naming porcupine's HTML visualisation of the history, which it
// writes to $GOVERNOR_LINZ_DIR or else to t.TempDir().
func Check(t testing.TB, model porcupine.Model, history []porcupine.Operation, timeout time.Duration) bool {
	t.Helper()
	result, info := porcupine.CheckOperationsVerbose(model, history, timeout)
	if result == porcupine.Ok {
		return true
	}
	path, err := visualize(t, model, info)
	if err != nil {
		t.Errorf("history of %d calls: %s, and its visualisation failed: %v", len(history), verdict(result, timeout), err)
		return false
	}
	t.Errorf("history of %d calls: %s; see %s", len(history), verdict(result, timeout), path)
	return false
}

func verdict(result porcupine.CheckResult, timeout time.Duration) string {
	if result == porcupine.Illegal {
		return "not linearizable"
	}
	return fmt.Sprintf("the check did not finish within %v", timeout)
}

// visualize writes the visualisation of info to a new file.
func visualize(t testing.TB, model porcupine.Model, info porcupine.LinearizationInfo) (string, error) {
	dir := os.Getenv(VisualizeDirEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	f, err := os.CreateTemp(dir, name+"-*.html")
	if err != nil {
		return "", err
	}
	path := filepath.Clean(f.Name())
	if err := porcupine.Visualize(model, info, f); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
}

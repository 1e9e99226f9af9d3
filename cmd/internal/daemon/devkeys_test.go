package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDevKeysAreGeneratedOnceAndKeptPrivate(t *testing.T) {
	dir := t.TempDir()
	first, err := devKeys(dir)
	must(t, err)
	if _, err := os.Stat(first.Path); err == nil {
		t.Fatal("the keys file was written before save")
	}
	must(t, first.save())
	if !first.New || len(first.Admin) < 16 || len(first.Demo) < 16 || first.Admin == first.Demo {
		t.Fatalf("generated keys %+v: want two different keys of at least 16 characters", first)
	}
	fi, err := os.Stat(first.Path)
	must(t, err)
	if fi.Mode().Perm() != 0o600 || filepath.Dir(first.Path) != dir {
		t.Fatalf("keys file %s mode %04o, want 0600 in %s", first.Path, fi.Mode().Perm(), dir)
	}
	again, err := devKeys(dir)
	must(t, err)
	if again.New || again.Admin != first.Admin || again.Demo != first.Demo {
		t.Fatalf("second start %+v, want the first start's keys %+v", again, first)
	}
	other, err := devKeys(t.TempDir())
	must(t, err)
	if other.Admin == first.Admin || other.Demo == first.Demo {
		t.Fatal("two directories got the same keys")
	}
}

func TestDevKeysFileThatCannotBeTrustedIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		want          string
	}{
		{"readable by others", "GOVERNOR_ADMIN_KEY=admin_aaaaaaaaaaaaaaaa\nGOVERNOR_API_KEY=demo_bbbbbbbbbbbbbbbb\n", 0o644, "chmod 600"},
		{"a key missing", "GOVERNOR_ADMIN_KEY=admin_aaaaaaaaaaaaaaaa\n", 0o600, "delete it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, KeysFile)
			must(t, os.WriteFile(path, []byte(tc.content), tc.mode))
			must(t, os.Chmod(path, tc.mode))
			_, err := devKeys(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// Sourcing the keys file hands the keys to the programs the shell starts,
// which is how the SDK and the governor command find them.
func TestDevKeysFileExportsToChildren(t *testing.T) {
	dir := t.TempDir()
	k, err := devKeys(dir)
	must(t, err)
	must(t, k.save())
	out, err := exec.Command("sh", "-c", ". "+k.Path+" && env").Output()
	must(t, err)
	env := string(out)
	for _, want := range []string{"GOVERNOR_ADMIN_KEY=" + k.Admin, "GOVERNOR_API_KEY=" + k.Demo} {
		if !strings.Contains(env, want+"\n") {
			t.Fatalf("a child of the shell that sourced %s lacks %s", k.Path, want)
		}
	}
}

// A file written without "export", as earlier versions did, still loads.
func TestDevKeysFileWithoutExport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeysFile)
	must(t, os.WriteFile(path, []byte("GOVERNOR_ADMIN_KEY=admin_aaaaaaaaaaaaaaaa\nGOVERNOR_API_KEY=demo_bbbbbbbbbbbbbbbb\n"), 0o600))
	k, err := devKeys(dir)
	must(t, err)
	if k.Admin != "admin_aaaaaaaaaaaaaaaa" || k.Demo != "demo_bbbbbbbbbbbbbbbb" || k.New {
		t.Fatalf("keys %+v, want the file's", k)
	}
}

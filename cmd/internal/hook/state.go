package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// held is what PreToolUse leaves for PostToolUse: the session that holds a
// tool's lease, and when both end by themselves.
type held struct {
	Token string    `json:"token"`
	Lease uint64    `json:"lease_id"`
	Until time.Time `json:"until"`
}

// stateDir keeps one private file per tool call that holds a lease.
type stateDir string

// DefaultStateDir is where lease files are kept unless --state-dir says
// otherwise: the user's cache directory.
func DefaultStateDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: no cache directory for lease files (%w); set --state-dir", ErrState, err)
	}
	return filepath.Join(base, "governor", "hook"), nil
}

// path names the file of one tool use at one governord.
func (d stateDir) path(server, requestID string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + requestID))
	return filepath.Join(string(d), hex.EncodeToString(sum[:20])+".lease")
}

// load reads a tool use's file; ok is false when there is none.
func (d stateDir) load(server, requestID string) (h held, ok bool, err error) {
	data, err := os.ReadFile(d.path(server, requestID))
	if errors.Is(err, fs.ErrNotExist) {
		return held{}, false, nil
	}
	if err != nil {
		return held{}, false, fmt.Errorf("%w: %w", ErrState, err)
	}
	if err := json.Unmarshal(data, &h); err != nil || h.Token == "" {
		return held{}, false, fmt.Errorf("%w: lease file %s is damaged; delete it", ErrState, d.path(server, requestID))
	}
	return h, true, nil
}

// save writes a tool use's file, readable by its owner only, through a
// rename so a reader never sees half of it.
func (d stateDir) save(server, requestID string, h held) error {
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	data, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	tmp, err := os.CreateTemp(string(d), ".lease-*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Rename(tmp.Name(), d.path(server, requestID))); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	return nil
}

// remove deletes a tool use's file; a missing one is fine.
func (d stateDir) remove(server, requestID string) error {
	if err := os.Remove(d.path(server, requestID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	return nil
}

// sweep deletes the files of tool calls whose PostToolUse never came and
// whose session has ended by itself, so a killed CLI leaves nothing behind.
func (d stateDir) sweep(now time.Time) {
	entries, err := os.ReadDir(string(d))
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lease") {
			continue
		}
		p := filepath.Join(string(d), e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var h held
		if json.Unmarshal(data, &h) != nil || now.After(h.Until) {
			_ = os.Remove(p)
		}
	}
}

package hook

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadInput checks that no payload makes the decoder panic, and that
// whatever it accepts has every field the decision needs.
func FuzzReadInput(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ReadInput(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInput) {
				t.Fatalf("error %v does not wrap ErrInput", err)
			}
			return
		}
		if in.SessionID == "" || in.ToolUseID == "" || in.ToolName == "" || (in.Event != PreToolUse && in.Event != PostToolUse) {
			t.Fatalf("accepted an incomplete payload: %+v", in)
		}
	})
}

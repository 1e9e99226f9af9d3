package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestUnknownJSONFieldsAreRefused: on governord's own API a misspelled
// field is refused with invalid_argument naming it, and nothing is charged;
// a consume that leaves the amount out is a peek whose answer says it
// charged nothing, and one that gives it says what it charged.
func TestUnknownJSONFieldsAreRefused(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	var refused struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	status := e.consumeJSON(t, `{"resource":"tokens","amout":5}`, &refused)
	if status != http.StatusBadRequest || refused.Code != "invalid_argument" || !strings.Contains(refused.Message, `unknown field "amout"`) {
		t.Fatalf("a misspelled amount: status %d, %+v; want invalid_argument naming amout", status, refused)
	}
	var answer struct {
		Remaining string `json:"remaining"`
		Charged   string `json:"charged"`
	}
	if status := e.consumeJSON(t, `{"resource":"tokens"}`, &answer); status != http.StatusOK || answer.Charged != "" || answer.Remaining != "100" {
		t.Fatalf("a consume without an amount: status %d, %+v; want a peek: 100 remaining, nothing charged", status, answer)
	}
	answer.Charged, answer.Remaining = "", ""
	if status := e.consumeJSON(t, `{"resource":"tokens","amount":5}`, &answer); status != http.StatusOK || answer.Charged != "5" || answer.Remaining != "95" {
		t.Fatalf("a consume of 5: status %d, %+v; want 5 charged, 95 remaining", status, answer)
	}
}

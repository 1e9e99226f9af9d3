package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Exit codes of the governor command.
const (
	ExitOK      = 0 // done as asked; the hook allows the tool
	ExitRefused = 1 // governord refused or denied
	ExitUsage   = 2 // a mistake in the command line or settings, or no governord; the hook refuses the tool
)

// errUsage marks a mistake in the command line.
var errUsage = errors.New("usage")

// errRefused marks an answer that is a refusal without an error from
// governord, such as a lease that is not held.
var errRefused = errors.New("refused")

// errShown is a refusal whose answer the command has already printed: it
// sets the exit code and prints nothing more.
var errShown = fmt.Errorf("%w: the answer is printed above", errRefused)

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// exitCode maps an error to the command's exit code.
func exitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errRefused):
		return ExitRefused
	case errors.Is(err, errUsage), errors.Is(err, clientconn.ErrConfig),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ExitUsage
	}
	switch connect.CodeOf(err) {
	case connect.CodeResourceExhausted, connect.CodePermissionDenied, connect.CodeUnauthenticated,
		connect.CodeFailedPrecondition, connect.CodeNotFound, connect.CodeAlreadyExists, connect.CodeAborted:
		return ExitRefused
	}
	return ExitUsage
}

// message is what the command prints for err: the server's words for an
// answer from governord, without the code's prefix.
func message(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		switch ce.Code() {
		case connect.CodeUnavailable, connect.CodeUnknown, connect.CodeInternal, connect.CodeDeadlineExceeded:
			return "governord could not be reached or failed: " + ce.Message()
		}
		return ce.Message()
	}
	return strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
}

// isMismatch says whether err is governord refusing a request id used
// before with different arguments.
func isMismatch(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument {
		return false
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if bf, ok := v.(*governorv1.BadField); ok && bf.Field == "request_id" {
				return true
			}
		}
	}
	return false
}

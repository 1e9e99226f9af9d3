package stallbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteAnswers is the Answered of a program that probes for a benchmark
// running in another: each answer becomes a line on out, which
// ReadAnswers turns back into the same answer. Instants travel as Unix
// nanoseconds, the wall clock both programs share.
func WriteAnswers(out io.Writer) Answered {
	return func(s Sample, err error, before time.Time) {
		line := fmt.Sprintf("%d %d %d %d", s.At.UnixNano(), s.Lat, s.Late, before.UnixNano())
		if err != nil {
			line += " error: " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		fmt.Fprintln(out, line)
	}
}

// ReadAnswers hands each answer WriteAnswers wrote on in to done, until in
// ends. A line it cannot read is an error.
func ReadAnswers(in io.Reader, done Answered) error {
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		var at, lat, late, before int64
		text, msg, failed := strings.Cut(lines.Text(), " error: ")
		if _, err := fmt.Sscan(text, &at, &lat, &late, &before); err != nil {
			return fmt.Errorf("stallbench: an answer %q: %v", lines.Text(), err)
		}
		var err error
		if failed {
			err = errors.New(msg)
		}
		done(Sample{At: time.Unix(0, at), Lat: time.Duration(lat), Late: time.Duration(late)}, err, time.Unix(0, before))
	}
	return lines.Err()
}

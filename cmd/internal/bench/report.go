package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Table is one scenario's result as printed: a title, a header row, rows and
// notes under them.
type Table struct {
	Title   string     `json:"title"`
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
	Notes   []string   `json:"notes,omitempty"`
}

// Result is what a scenario measured. Its exported fields are the -json
// output; Table renders them for people.
type Result interface {
	Table() Table
}

// WriteText prints t as aligned columns.
func (t Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\n\n", t.Title)
	fmt.Fprintln(tw, strings.Join(t.Columns, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		if _, err := fmt.Fprintf(w, "  %s\n", n); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

// ms prints a duration in milliseconds, the unit every scenario reports.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// us prints a duration in microseconds.
func us(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

// num prints a count with thousands separators.
func num(v int64) string {
	s := fmt.Sprint(v)
	if v < 0 {
		return "-" + num(-v)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// p95 returns the 95th percentile of ds (nearest rank); 0 for none.
func p95(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	slices.Sort(s)
	i := (len(s)*95 + 99) / 100
	return s[max(i, 1)-1]
}

package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Chart geometry, in SVG user units.
const (
	chartPanelW  = 420
	chartPanelH  = 260
	chartMargin  = 60
	chartLegendH = 24
)

// chartColors tell the peers apart; dashes tell the protocols apart.
var (
	chartColors = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"}
	chartDashes = map[Protocol]string{GRPC: "", HTTPJSON: "6 4"}
)

// series is one line of a panel: a peer over one protocol.
type series struct {
	label  string
	color  string
	dash   string
	values []float64 // one per number of callers; negative when not run
}

// WriteSVG draws the comparison as two panels, throughput and p99 against
// the number of callers, one line per peer and protocol (medians).
func (c *Comparison) WriteSVG(w io.Writer) error {
	callers := c.callers()
	var rates, p99s []series
	for i, peer := range c.Peers {
		for _, proto := range []Protocol{GRPC, HTTPJSON} {
			r := series{label: peer + ", " + string(proto), color: chartColors[i%len(chartColors)], dash: chartDashes[proto]}
			l := r
			for _, n := range callers {
				rate, p99 := -1.0, -1.0
				if runs := c.runs(proto, n, i); len(runs) > 0 {
					var d time.Duration
					rate, d, _ = median(runs)
					p99 = float64(d) / float64(time.Millisecond)
				}
				r.values, l.values = append(r.values, rate), append(l.values, p99)
			}
			if r.values[0] >= 0 || r.values[len(r.values)-1] >= 0 {
				rates, p99s = append(rates, r), append(p99s, l)
			}
		}
	}
	width := 2*chartPanelW + 3*chartMargin
	height := chartPanelH + 2*chartMargin + chartLegendH*((len(rates)+1)/2)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	panel(&b, chartMargin, "calls per second", callers, rates)
	panel(&b, 2*chartMargin+chartPanelW, "p99 latency (ms)", callers, p99s)
	for i, s := range rates {
		x := chartMargin + (i%2)*(chartPanelW+chartMargin)
		y := chartPanelH + 2*chartMargin + chartLegendH*(i/2)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n", x, y, x+30, y, s.color, s.dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+38, y+4, escape(s.label))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel draws one panel at x: axes, a title, and the lines, the callers
// evenly spaced along the bottom and the values from 0 to the largest.
func panel(b *strings.Builder, x int, title string, callers []int, lines []series) {
	top, bottom := chartMargin, chartMargin+chartPanelH
	peak := 0.0
	for _, s := range lines {
		for _, v := range s.values {
			peak = max(peak, v)
		}
	}
	peak = max(peak*1.1, 1e-9)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", x, top-20, escape(title))
	fmt.Fprintf(b, `<polyline points="%d,%d %d,%d %d,%d" fill="none" stroke="black"/>`+"\n", x, top, x, bottom, x+chartPanelW, bottom)
	for i := 0; i <= 4; i++ {
		y := bottom - i*chartPanelH/4
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", x-4, y+4, short(peak*float64(i)/4))
	}
	at := func(i int) int {
		if len(callers) == 1 {
			return x + chartPanelW/2
		}
		return x + 20 + i*(chartPanelW-40)/(len(callers)-1)
	}
	for i, n := range callers {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%d</text>`+"\n", at(i), bottom+16, n)
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">callers</text>`+"\n", x+chartPanelW/2, bottom+34)
	for _, s := range lines {
		var pts []string
		for i, v := range s.values {
			if v >= 0 {
				pts = append(pts, fmt.Sprintf("%d,%d", at(i), bottom-int(v/peak*chartPanelH)))
			}
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n", strings.Join(pts, " "), s.color, s.dash)
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], s.color)
		}
	}
}

// short prints an axis value: thousands as k, small values with a decimal.
func short(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0fk", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.1fk", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// escape makes s safe as SVG text.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// callers lists the comparison's numbers of callers in the order they ran.
func (c *Comparison) callers() []int {
	var out []int
	for _, cell := range c.Cells {
		if cell.Protocol == c.Cells[0].Protocol {
			out = append(out, cell.Callers)
		}
	}
	return out
}

// runs returns peer's runs in the cell of proto at n callers.
func (c *Comparison) runs(proto Protocol, n, peer int) []LoadResult {
	for _, cell := range c.Cells {
		if cell.Protocol == proto && cell.Callers == n {
			return cell.Runs[peer]
		}
	}
	return nil
}

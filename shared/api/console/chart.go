package console

import (
	"fmt"
	"strings"

	"github.com/automation-platform/automation/shared/support"
)

// Chart geometry (SVG user units); the SVG scales to the page's width.
const (
	chartW, chartH = 720.0, 200.0
	padL, padR     = 40.0, 10.0
	padT, padB     = 10.0, 24.0
)

// chart is a server-drawn line chart of deliveries per minute: no script, readable without
// colour (each series has its own dash pattern and a legend), with a summary table beside it.
type chart struct {
	W, H   float64
	Series []series
	YMax   int
	YTicks []tick
	XTicks []tick
	// Rows sum the minutes per tenth of the window, for the table (screen readers, small screens).
	Rows []chartRow
	Axis struct{ X0, X1, Y0, Y1 float64 }
}

type series struct {
	Name, Class, Dash, Points string
	Total                     int
}

type tick struct {
	Pos    float64
	Label  string
	Anchor string // text-anchor: the last time label ends at the axis' end
}

type chartRow struct {
	From, To              string
	Sent, Failed, Unknown int
}

func throughputChart(tp support.Throughput) chart {
	c := chart{W: chartW, H: chartH}
	c.Axis.X0, c.Axis.X1, c.Axis.Y0, c.Axis.Y1 = padL, chartW-padR, chartH-padB, padT
	n := len(tp.Minutes)
	maxV := 1
	for _, m := range tp.Minutes {
		maxV = max(maxV, m.Sent, m.Failed, m.Unknown)
	}
	c.YMax = maxV
	x := func(i int) float64 {
		if n <= 1 {
			return padL
		}
		return padL + float64(i)*(chartW-padL-padR)/float64(n-1)
	}
	y := func(v int) float64 { return chartH - padB - float64(v)*(chartH-padT-padB)/float64(maxV) }
	line := func(get func(support.ThroughputMinute) int) string {
		var b strings.Builder
		for i, m := range tp.Minutes {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(i), y(get(m)))
		}
		return strings.TrimSpace(b.String())
	}
	c.Series = []series{
		{Name: "Sent", Class: "sent", Dash: "", Points: line(func(m support.ThroughputMinute) int { return m.Sent }), Total: tp.Sent},
		{Name: "Failed", Class: "failed", Dash: "6 3", Points: line(func(m support.ThroughputMinute) int { return m.Failed }), Total: tp.Failed},
		{Name: "UNKNOWN", Class: "unknown", Dash: "2 3", Points: line(func(m support.ThroughputMinute) int { return m.Unknown }), Total: tp.Unknown},
	}
	for _, v := range []int{0, maxV / 2, maxV} {
		c.YTicks = append(c.YTicks, tick{Pos: y(v), Label: fmt.Sprint(v)})
	}
	if n > 0 {
		for k, i := range []int{0, n / 2, n - 1} {
			c.XTicks = append(c.XTicks, tick{Pos: x(i), Label: tp.Minutes[i].Minute.Format("15:04") + "Z", Anchor: []string{"start", "middle", "end"}[k]})
		}
		step := max(1, n/10)
		for i := 0; i < n; i += step {
			j := min(n, i+step)
			r := chartRow{From: tp.Minutes[i].Minute.Format("15:04"), To: tp.Minutes[j-1].Minute.Format("15:04")}
			for _, m := range tp.Minutes[i:j] {
				r.Sent += m.Sent
				r.Failed += m.Failed
				r.Unknown += m.Unknown
			}
			c.Rows = append(c.Rows, r)
		}
	}
	return c
}

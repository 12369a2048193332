package console

import (
	"fmt"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/support"
)

// Chart geometry (SVG user units); the SVG scales to the page's width.
const (
	chartW, chartH = 720.0, 200.0
	padL, padR     = 40.0, 10.0
	padT, padB     = 10.0, 24.0
)

// chart is a server-drawn line chart (deliveries per minute, a sampled figure over the
// window): no script, readable without colour (each series has its own dash pattern and a
// legend), with a summary table beside it. One template block ("chart" in overview.html)
// draws every chart of the overview from it.
type chart struct {
	ID     string // the SVG's title and description ids start with it
	Figure string // the figure's id ("chart-" and ID unless a page named it otherwise)
	// Title is the SVG's title; Desc its description; Heading, when set, leads the caption
	// (bold), followed by Note.
	Title, Desc, Heading, Note string
	TickX                      float64 // where the y-axis labels end: the left margin fits the longest one
	W, H                       float64
	Series                     []series
	YMax                       int
	YTicks                     []tick
	XTicks                     []tick
	// Columns head the table's value columns; Rows sum (counts) or peak (samples) the
	// minutes per tenth of the window, for the table (screen readers, small screens), under
	// the disclosure's TableLabel and the table's Caption.
	Columns             []string
	Rows                []chartRow
	TableLabel, Caption string
	Axis                struct{ X0, X1, Y0, Y1 float64 }
	Empty               bool // no samples in the window yet
	// Few says the window holds fewer than two samples: no line is drawn, the caption says
	// so (Note) and the legend gives the figures now.
	Few bool
}

// series is one line of a chart; Summary is its legend's figure (a count's total; a
// sample's "now …, peak …").
type series struct {
	Name, Class, Dash, Points, Summary string
	Total                              int
}

type tick struct {
	X      float64 // a y-axis label's end (its text-anchor); unused for x-axis labels
	Pos    float64
	Label  string
	Anchor string // text-anchor: the last time label ends at the axis' end
}

type chartRow struct {
	From, To              string
	Sent, Failed, Unknown int
	// Values are the row's figures of the series drawn, in their order (the table's cells).
	Values []string
}

// throughputChart draws tp; names are its three series ("Sent", "Failed", "UNKNOWN" for
// deliveries; "Succeeded", … for campaign commands; a flow without one of the three
// columns names it "": that series is neither drawn nor tabled); id prefixes the SVG's
// title ids.
func throughputChart(tp support.Throughput, id string, names ...string) chart {
	if len(names) != 3 {
		names = []string{"Sent", "Failed", "UNKNOWN"}
	}
	c := chart{ID: id, Figure: "chart-" + id, W: chartW, H: chartH, TableLabel: "The same figures as a table"}
	n := len(tp.Minutes)
	maxV := 1
	for _, m := range tp.Minutes {
		maxV = max(maxV, m.Sent, m.Failed, m.Unknown)
	}
	c.YMax = maxV
	left := leftFor(fmt.Sprint(maxV))
	c.TickX = left - tickGap
	c.Axis.X0, c.Axis.X1, c.Axis.Y0, c.Axis.Y1 = left, chartW-padR, chartH-padB, padT
	x := func(i int) float64 {
		if n <= 1 {
			return left
		}
		return left + float64(i)*(chartW-left-padR)/float64(n-1)
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
		{Name: names[0], Class: "sent", Dash: "", Points: line(func(m support.ThroughputMinute) int { return m.Sent }), Total: tp.Sent},
		{Name: names[1], Class: "failed", Dash: "6 3", Points: line(func(m support.ThroughputMinute) int { return m.Failed }), Total: tp.Failed},
		{Name: names[2], Class: "unknown", Dash: "2 3", Points: line(func(m support.ThroughputMinute) int { return m.Unknown }), Total: tp.Unknown},
	}
	kept := c.Series[:0]
	var keep []int
	for i, sr := range c.Series {
		if sr.Name != "" {
			kept, keep = append(kept, sr), append(keep, i)
		}
	}
	c.Series = kept
	for i := range c.Series {
		c.Series[i].Summary = fmt.Sprint(c.Series[i].Total)
		c.Columns = append(c.Columns, c.Series[i].Name)
	}
	for _, v := range []int{0, maxV / 2, maxV} {
		c.YTicks = append(c.YTicks, tick{X: c.TickX, Pos: y(v), Label: fmt.Sprint(v)})
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
			for _, k := range keep {
				r.Values = append(r.Values, fmt.Sprint([3]int{r.Sent, r.Failed, r.Unknown}[k]))
			}
			c.Rows = append(c.Rows, r)
		}
	}
	return c
}

// titled names a throughput chart on its page: the figure's id, the SVG's title, its
// description (descFmt has one %d per series drawn, for its total; the sentence about the
// window and the table follows) and the table's caption.
func (c chart) titled(figure, title, descFmt, caption string) chart {
	totals := make([]any, len(c.Series))
	for i, s := range c.Series {
		totals[i] = s.Total
	}
	c.Figure, c.Title, c.Caption = figure, title, caption
	c.Desc = fmt.Sprintf(descFmt, totals...) + " over the window; the table below lists them by period."
	return c
}

// maxChartPoints bounds the points of one history series: longer windows keep the largest
// value of each run of samples, so a peak is never averaged away.
const maxChartPoints = 360

// histSeries is one figure of the history.
type histSeries struct {
	Name, Class, Dash string
	Get               func(support.MetricsPoint) int64
}

// historyChart draws series of h between h.Since and asOf, placing each sample at its
// instant (a gap in the sampling stays a gap in time); label writes a value (a count, an
// age).
//
// live is the figures now (the overview's tiles, support.Metrics at asOf): the chart's last
// point, so the legend's "now" is the tile's figure (issue 35: the tile said "Due backlog
// 0" while the legend, from the last sample, said "now 1"). A sample at asOf itself is
// replaced by it. With fewer than two samples no line is drawn and the caption says so.
func historyChart(id, title string, h support.MetricsHistory, live support.MetricsPoint, ss []histSeries, label func(int64) string) chart {
	asOf := live.On
	c := chart{ID: id, Figure: "chart-" + id, Title: title, Heading: title, W: chartW, H: chartH, Empty: len(h.Points) == 0, Few: len(h.Points) < 2,
		TableLabel: title + " as a table", Caption: title + ": peaks by period (UTC)"}
	switch len(h.Points) {
	case 0:
		c.Note = "no samples yet: the first is taken within a minute of start-up; the figures now are in the legend."
	case 1:
		c.Note = "one sample so far (" + h.Points[0].On.UTC().Format("15:04") + "Z): a line needs two; the figures now are in the legend."
	}
	all := append([]support.MetricsPoint(nil), h.Points...)
	if n := len(all); n > 0 && !all[n-1].On.Before(asOf) {
		all = all[:n-1]
	}
	all = append(all, live)
	pts := all
	if step := (len(pts) + maxChartPoints - 1) / maxChartPoints; step > 1 {
		pts = make([]support.MetricsPoint, 0, maxChartPoints)
		for i := 0; i < len(all); i += step {
			agg := all[i]
			for _, p := range all[i+1 : min(len(all), i+step)] {
				agg = peak(agg, p)
				agg.On = p.On
			}
			pts = append(pts, agg)
		}
	}
	var maxV int64 = 1
	for _, p := range pts {
		for _, s := range ss {
			maxV = max(maxV, s.Get(p))
		}
	}
	span := asOf.Sub(h.Since)
	if span <= 0 {
		span = time.Minute
	}
	left := leftFor(label(maxV), label(maxV/2))
	c.TickX = left - tickGap
	c.Axis.X0, c.Axis.X1, c.Axis.Y0, c.Axis.Y1 = left, chartW-padR, chartH-padB, padT
	x := func(t time.Time) float64 {
		return left + float64(t.Sub(h.Since))/float64(span)*(chartW-left-padR)
	}
	y := func(v int64) float64 { return chartH - padB - float64(v)*(chartH-padT-padB)/float64(maxV) }
	var desc []string
	for _, s := range ss {
		var b strings.Builder
		var top int64
		for _, p := range pts {
			v := s.Get(p)
			if !c.Few {
				fmt.Fprintf(&b, "%.1f,%.1f ", x(p.On), y(v))
			}
			top = max(top, v)
		}
		sum := fmt.Sprintf("now %s, peak %s", label(s.Get(live)), label(top))
		if c.Few {
			sum = "now " + label(s.Get(live))
		}
		c.Series = append(c.Series, series{Name: s.Name, Class: s.Class, Dash: s.Dash, Points: strings.TrimSpace(b.String()), Summary: sum})
		c.Columns = append(c.Columns, s.Name)
		desc = append(desc, s.Name+": "+sum)
	}
	c.Desc = strings.Join(desc, "; ") + ". The table below lists the peaks by period."
	for _, v := range []int64{0, maxV / 2, maxV} {
		c.YTicks = append(c.YTicks, tick{X: c.TickX, Pos: y(v), Label: label(v)})
	}
	for k, t := range []time.Time{h.Since, h.Since.Add(span / 2), asOf} {
		c.XTicks = append(c.XTicks, tick{Pos: x(t), Label: t.UTC().Format("15:04") + "Z", Anchor: []string{"start", "middle", "end"}[k]})
	}
	tenth := span / 10
	for i := range 10 {
		from, to := h.Since.Add(time.Duration(i)*tenth), h.Since.Add(time.Duration(i+1)*tenth)
		tops := make([]int64, len(ss))
		seen := false
		for _, p := range all {
			if p.On.Before(from) || !p.On.Before(to) && i < 9 {
				continue
			}
			seen = true
			for j, s := range ss {
				tops[j] = max(tops[j], s.Get(p))
			}
		}
		if !seen {
			continue
		}
		r := chartRow{From: from.UTC().Format("15:04"), To: to.UTC().Format("15:04")}
		for _, v := range tops {
			r.Values = append(r.Values, label(v))
		}
		c.Rows = append(c.Rows, r)
	}
	return c
}

// peak keeps the larger of each figure of a and b.
func peak(a, b support.MetricsPoint) support.MetricsPoint {
	a.PendingDue, a.OnHold = max(a.PendingDue, b.PendingDue), max(a.OnHold, b.OnHold)
	a.OldestDueAgeSeconds = max(a.OldestDueAgeSeconds, b.OldestDueAgeSeconds)
	if a.OutboxUnsent != nil && b.OutboxUnsent != nil {
		n, s := max(*a.OutboxUnsent, *b.OutboxUnsent), max(*a.OutboxOldestAgeSeconds, *b.OutboxOldestAgeSeconds)
		a.OutboxUnsent, a.OutboxOldestAgeSeconds = &n, &s
	}
	return a
}

// historyCharts are the overview's history charts: the due backlog and holds (rows), and
// the oldest due age with the outbox age when the history is the platform's (seconds).
func historyCharts(h support.MetricsHistory, m support.Metrics) []chart {
	live := support.MetricsPoint{On: m.AsOf, PendingDue: m.PendingDueNow, OnHold: m.OnHold}
	if m.OldestDueAgeSeconds != nil {
		live.OldestDueAgeSeconds = *m.OldestDueAgeSeconds
	}
	if h.Platform {
		live.OutboxUnsent, live.OutboxOldestAgeSeconds = m.OutboxUnsent, m.OutboxOldestAgeSeconds
		if live.OutboxUnsent == nil {
			z := 0
			live.OutboxUnsent = &z
		}
		if live.OutboxOldestAgeSeconds == nil {
			var z int64
			live.OutboxOldestAgeSeconds = &z
		}
	}
	count := func(v int64) string { return fmt.Sprint(v) }
	backlog := historyChart("backlog", "Due backlog and holds", h, live, []histSeries{
		{Name: "Due backlog", Class: "sent", Get: func(p support.MetricsPoint) int64 { return int64(p.PendingDue) }},
		{Name: "On hold", Class: "failed", Dash: "6 3", Get: func(p support.MetricsPoint) int64 { return int64(p.OnHold) }},
	}, count)
	asOf := live
	ages := []histSeries{{Name: "Oldest due age", Class: "sent", Get: func(p support.MetricsPoint) int64 { return p.OldestDueAgeSeconds }}}
	title := "Oldest due age"
	if h.Platform {
		title = "Oldest due age and outbox age"
		ages = append(ages, histSeries{Name: "Outbox age", Class: "unknown", Dash: "2 3", Get: func(p support.MetricsPoint) int64 {
			if p.OutboxOldestAgeSeconds == nil {
				return 0
			}
			return *p.OutboxOldestAgeSeconds
		}})
	}
	return []chart{backlog, historyChart("ages", title, h, asOf, ages, ageLabel)}
}

// tickGap is the space between a y-axis label's end and the axis; tickCharW a generous
// width of one character of the 11 px tick font in viewBox units.
const (
	tickGap   = 6.0
	tickCharW = 7.0
)

// leftFor is the left margin that fits the longest y-axis label (issue 35: "6h 25m" was
// clipped at the fixed 40 units): at least padL.
func leftFor(labels ...string) float64 {
	w := 0
	for _, l := range labels {
		w = max(w, len([]rune(l)))
	}
	return max(padL, float64(w)*tickCharW+tickGap+4)
}

// ageLabel writes seconds as a short duration ("3h 4m", "5m 2s", "42s").
func ageLabel(s int64) string {
	d := time.Duration(s) * time.Second
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

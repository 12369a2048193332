package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
)

func main() {
	workloads := flag.String("workloads", "testdata/bench/workloads.txt", "workloads file")
	peers := flag.String("peers", "../shared/bench", "directory holding the floor and riverpeer modules (absent: no ratios)")
	logPath := flag.String("log", "", "file for the raw benchmark output (default: discard)")
	flag.Parse()
	if err := run(*workloads, *peers, *logPath, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

// Workload is one line of the workloads file.
type Workload struct {
	Name, Package, Bench string
	Args                 []string
	PeerRows             int // 0: no peer comparison
}

// ParseWorkloads reads a workloads file (see the package comment). Errors name the line.
func ParseWorkloads(r io.Reader, getenv func(string) string) ([]Workload, error) {
	var out []Workload
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(os.Expand(line, getenv), "|")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if len(f) < 3 || len(f) > 5 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("workloads line %d: want \"name | package | bench regexp | args | peer rows\"", n)
		}
		w := Workload{Name: f[0], Package: f[1], Bench: f[2]}
		if len(f) > 3 {
			w.Args = strings.Fields(f[3])
		}
		if len(f) > 4 && f[4] != "" {
			k, err := strconv.Atoi(f[4])
			if err != nil || k <= 0 {
				return nil, fmt.Errorf("workloads line %d: peer rows %q is not a positive number", n, f[4])
			}
			w.PeerRows = k
		}
		out = append(out, w)
	}
	return out, sc.Err()
}

// Result is one table row.
type Result struct {
	Name     string
	Rate     float64 // 0: none reported
	RateUnit string
	P50, P99 string // "12 ms", or ""
	RSSMiB   float64
	Stages   []string // further rates, "unit value"
	Floor    float64  // peer rates, 0 when not compared
	River    float64
	Failed   string
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// ParseBench turns `go test -bench` output into rows named prefix (plus the sub-benchmark's
// name when the output holds more than one benchmark line).
func ParseBench(prefix string, out []byte) []Result {
	var lines [][]string
	for _, l := range strings.Split(string(out), "\n") {
		if m := benchLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			lines = append(lines, m[1:])
		}
	}
	var rs []Result
	for _, m := range lines {
		r := Result{Name: prefix}
		if len(lines) > 1 {
			if _, sub, ok := strings.Cut(m[0], "/"); ok {
				r.Name += " " + sub
			}
		}
		f := strings.Fields(m[1])
		type metric struct {
			v    float64
			unit string
		}
		var rates []metric
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			unit := f[i+1]
			switch {
			case unit == "peak-rss-MiB":
				r.RSSMiB = v
			case strings.HasPrefix(unit, "p50-") && r.P50 != "", strings.HasPrefix(unit, "p99-") && r.P99 != "":
				// A second latency (W6: event → attribute, then event → inbox): listed with
				// the stages, the first keeps the columns.
				r.Stages = append(r.Stages, unit[:3]+" "+formatLatency(v, unit[4:]))
			case strings.HasPrefix(unit, "p50-"):
				r.P50 = formatLatency(v, strings.TrimPrefix(unit, "p50-"))
			case strings.HasPrefix(unit, "p99-"):
				r.P99 = formatLatency(v, strings.TrimPrefix(unit, "p99-"))
			case strings.HasSuffix(unit, "/s"):
				rates = append(rates, metric{v, unit})
			}
		}
		best := -1
		for i, m := range rates {
			if m.unit == "rows/s" || (best < 0 && !strings.Contains(m.unit, "-")) {
				best = i
			}
		}
		if best < 0 && len(rates) > 0 {
			best = 0
		}
		for i, m := range rates {
			if i == best {
				r.Rate, r.RateUnit = m.v, m.unit
				continue
			}
			r.Stages = append(r.Stages, fmt.Sprintf("%s %s", strings.TrimSuffix(m.unit, "/s"), humanRate(m.v)+"/s"))
		}
		rs = append(rs, r)
	}
	return rs
}

// formatLatency prints v in unit ("ms", "ms/batch"), or in seconds from 10 s up.
func formatLatency(v float64, unit string) string {
	if rest, ok := strings.CutPrefix(unit, "ms"); ok && v >= 10_000 {
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + " s" + rest
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " " + unit
}

func humanRate(v float64) string {
	s := strconv.FormatFloat(v, 'f', 0, 64)
	if v < 100 {
		s = strconv.FormatFloat(v, 'f', 1, 64)
	}
	// thousands separators
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// peer runs one peer binary and returns its rate (the number before "rows/s" or "jobs/s")
// and peak RSS (MiB).
func peer(bin string, n int, db string, log io.Writer) (float64, float64, error) {
	cmd := exec.Command(bin, "-n", strconv.Itoa(n), "-db", db)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, log), io.MultiWriter(&out, log)
	err := cmd.Run()
	for _, s := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(db + s)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w: %s", filepath.Base(bin), err, out.String())
	}
	m := regexp.MustCompile(`\(([0-9.]+) (?:rows|jobs)/s\)`).FindStringSubmatch(out.String())
	if m == nil {
		return 0, 0, fmt.Errorf("%s printed no rate: %s", filepath.Base(bin), out.String())
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	var rss float64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = float64(ru.Maxrss) / 1024
	}
	return v, rss, nil
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func run(workloadsPath, peersDir, logPath string, stdout io.Writer) error {
	wf, err := os.Open(workloadsPath)
	if err != nil {
		return err
	}
	ws, err := ParseWorkloads(wf, os.Getenv)
	wf.Close()
	if err != nil {
		return err
	}
	log := io.Discard
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		log = f
	}
	tmp, err := os.MkdirTemp("", "benchtable-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The peers are separate modules: build them once, in their own directories.
	havePeers := false
	floorBin, riverBin := filepath.Join(tmp, "floor"), filepath.Join(tmp, "riverpeer")
	if st, err := os.Stat(peersDir); err == nil && st.IsDir() {
		havePeers = true
		for dir, bin := range map[string]string{"floor": floorBin, "riverpeer": riverBin} {
			cmd := exec.Command("go", "build", "-o", bin, ".")
			cmd.Dir = filepath.Join(peersDir, dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("build %s: %w: %s", cmd.Dir, err, out)
			}
		}
	}
	fmt.Fprintf(stdout, "benchmarks on %d cores, load average %s at start\n", runtime.NumCPU(), loadAvg())
	if !havePeers {
		fmt.Fprintf(stdout, "%s is absent: the floor and River are not run, no ratios\n", peersDir)
	}
	var rows []Result
	for _, w := range ws {
		fmt.Fprintf(os.Stderr, "benchtable: %s …\n", w.Name)
		args := append([]string{"test", w.Package, "-run", "^$", "-bench", w.Bench, "-benchtime", "1x", "-timeout", "60m"}, "-args")
		args = append(args, w.Args...)
		cmd := exec.Command("go", args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, log), io.MultiWriter(&out, log)
		runErr := cmd.Run()
		rs := ParseBench(w.Name, out.Bytes())
		if runErr != nil || len(rs) == 0 {
			msg := "no benchmark output"
			if runErr != nil {
				msg = runErr.Error()
			}
			rows = append(rows, Result{Name: w.Name, Failed: msg})
			continue
		}
		if havePeers && w.PeerRows > 0 {
			fv, frss, ferr := peer(floorBin, w.PeerRows, filepath.Join(tmp, "floor.db"), log)
			rv, rrss, rerr := peer(riverBin, w.PeerRows, filepath.Join(tmp, "river.db"), log)
			if err := errors.Join(ferr, rerr); err != nil {
				return err
			}
			for i := range rs {
				rs[i].Floor, rs[i].River = fv, rv
			}
			rs = append(rs,
				Result{Name: fmt.Sprintf("  floor (raw SQL), %d rows", w.PeerRows), Rate: fv, RateUnit: "rows/s", RSSMiB: frss},
				Result{Name: fmt.Sprintf("  River, %d jobs", w.PeerRows), Rate: rv, RateUnit: "jobs/s", RSSMiB: rrss})
		}
		rows = append(rows, rs...)
	}
	fmt.Fprintf(stdout, "load average %s at end\n\n", loadAvg())
	return Print(stdout, rows, havePeers)
}

// Print writes rows as one aligned table.
func Print(w io.Writer, rows []Result, ratios bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "workload\trate\tp50\tp99\tpeak RSS"
	if ratios {
		head += "\tvs floor\tvs River"
	}
	fmt.Fprintln(tw, head+"\tstages")
	for _, r := range rows {
		if r.Failed != "" {
			fmt.Fprintf(tw, "%s\tFAILED: %s\n", r.Name, r.Failed)
			continue
		}
		dash := func(s string) string {
			if s == "" {
				return "-"
			}
			return s
		}
		rate := "-"
		if r.Rate > 0 {
			rate = humanRate(r.Rate) + " " + r.RateUnit
		}
		rss := "-"
		if r.RSSMiB > 0 {
			rss = fmt.Sprintf("%.0f MiB", r.RSSMiB)
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.Name, rate, dash(r.P50), dash(r.P99), rss)
		if ratios {
			ratio := func(p float64) string {
				if p <= 0 || r.Rate <= 0 {
					return "-"
				}
				return fmt.Sprintf("%.2fx", r.Rate/p)
			}
			line += "\t" + ratio(r.Floor) + "\t" + ratio(r.River)
		}
		fmt.Fprintln(tw, line+"\t"+dash(strings.Join(r.Stages, ", ")))
	}
	return tw.Flush()
}

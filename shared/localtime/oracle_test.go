package localtime

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// oracleCasesFile holds expectations for the DST product rule
// (docs/architecture.md#dst-product-rule) produced by the independent
// Python oracle, not by this package. Regenerate with
// testdata/tz/gen_oracle_cases.sh.
const oracleCasesFile = "../../testdata/tz/oracle_cases.txt"

// defaultOracle is the oracle script; TZORACLE overrides it (as in
// gen_oracle_cases.sh).
const defaultOracle = "../../../shared/tools/tzoracle.py" // beside the repository, when present (docs/architecture.md#dst-oracle)

type oracleCase struct {
	line       int
	zone       string
	date, hhmm string // as written: YYYY-MM-DD, HH:MM (local)
	utc        string // oracle: YYYY-MM-DDTHH:MM:SSZ
	local      string // oracle: Python isoformat with offset
	kind       string // normal | gap | overlap
}

func (c oracleCase) name() string { return c.zone + "/" + c.date + "T" + c.hhmm }

func readOracleCases(t *testing.T) []oracleCase {
	t.Helper()
	f, err := os.Open(oracleCasesFile)
	if err != nil {
		t.Fatalf("open oracle cases: %v", err)
	}
	defer f.Close()
	var cases []oracleCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		data, comment, _ := strings.Cut(line, "#")
		fields := strings.Fields(data)
		if len(fields) != 5 {
			t.Fatalf("%s:%d: want 5 fields (zone date hh:mm utc local), got %d: %q", oracleCasesFile, n, len(fields), line)
		}
		cases = append(cases, oracleCase{
			line: n, zone: fields[0], date: fields[1], hhmm: fields[2],
			utc: fields[3], local: fields[4], kind: strings.TrimSpace(comment),
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// rfc3339FromOracle converts the oracle's Python isoformat rendering to what
// time.RFC3339 produces: identical except that a zero offset is "Z" in Go
// and "+00:00" in Python (RFC 3339 treats them as equal).
func rfc3339FromOracle(s string) string {
	if rest, ok := strings.CutSuffix(s, "+00:00"); ok {
		return rest + "Z"
	}
	return s
}

func TestResolveMatchesOracle(t *testing.T) {
	t.Parallel()
	cases := readOracleCases(t)
	if len(cases) < 50 {
		t.Fatalf("only %d oracle cases in %s", len(cases), oracleCasesFile)
	}
	for _, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			t.Parallel()
			loc := mustZone(t, c.zone)
			d, err := ParseDate(c.date)
			if err != nil {
				t.Fatal(err)
			}
			tod, err := ParseTimeOfDay(c.hhmm)
			if err != nil {
				t.Fatal(err)
			}
			u, res := ResolveDetail(loc, d, tod)
			if u.Location() != time.UTC {
				t.Errorf("Location = %v, want UTC", u.Location())
			}
			if got := u.Format(time.RFC3339); got != c.utc {
				t.Errorf("Resolve(%s %s %s) = %s, oracle says %s (line %d)", c.zone, c.date, c.hhmm, got, c.utc, c.line)
			}
			if got, want := u.In(loc).Format(time.RFC3339), rfc3339FromOracle(c.local); got != want {
				t.Errorf("local rendering = %s, oracle says %s (line %d)", got, want, c.line)
			}
			if res.String() != c.kind {
				t.Errorf("Resolution = %v, file says %q (line %d)", res, c.kind, c.line)
			}
			if r2 := Resolve(loc, d, tod); !r2.Equal(u) {
				t.Errorf("Resolve = %v, ResolveDetail = %v", r2, u)
			}
		})
	}
}

// TestOracleCasesCoverage guards the case file against losing the
// categories the DST product rule tests rely on.
func TestOracleCasesCoverage(t *testing.T) {
	t.Parallel()
	have := map[string]bool{}
	for _, c := range readOracleCases(t) {
		have[c.zone+" "+c.kind] = true
		have[c.zone+" "+c.kind+" "+c.date[:4]] = true
		if c.kind != "normal" && strings.HasPrefix(c.hhmm, "00:") {
			have[c.zone+" "+c.kind+" midnight"] = true
		}
	}
	for _, want := range []string{
		"Australia/Sydney gap 2026", "Australia/Sydney overlap 2026",
		"Australia/Sydney gap 2027", "Australia/Sydney overlap 2027",
		"America/New_York gap", "America/New_York overlap",
		"Australia/Lord_Howe gap", "Australia/Lord_Howe overlap",
		"Asia/Kathmandu normal", "Asia/Ho_Chi_Minh normal",
		"America/Havana gap midnight", "America/Havana overlap midnight",
		"America/Santiago gap midnight", "America/Santiago overlap",
		"Asia/Beirut gap midnight", "Asia/Beirut overlap",
		"Europe/London gap", "Europe/London overlap",
		"Pacific/Apia gap",
	} {
		if !have[want] {
			t.Errorf("oracle cases lack %q", want)
		}
	}
}

// TestOracleCasesFresh re-runs the oracle for every case and fails if
// oracle_cases.txt is stale (e.g. the case list or the oracle's tzdata
// changed without regenerating the file).
func TestOracleCasesFresh(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipping oracle re-run in -short mode (spawns python3 once per case)")
	}
	oracle := defaultOracle
	if v := os.Getenv("TZORACLE"); v != "" {
		oracle = v
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("skipping oracle freshness check: python3 not found in PATH (%v)", err)
	}
	if _, err := os.Stat(oracle); err != nil {
		t.Skipf("skipping oracle freshness check: the oracle %s (a Python zoneinfo script, an independent source of local-time answers kept beside the repository, not in it; TZORACLE names another path) is not available (%v); the committed oracle cases (testdata/tz/oracle_cases.txt) still run in TestResolveMatchesOracle", oracle, err)
	}
	for _, c := range readOracleCases(t) {
		t.Run(c.name(), func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command(python, oracle, c.zone, c.date, c.hhmm).Output()
			if err != nil {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("oracle %s %s %s: %v %s", c.zone, c.date, c.hhmm, err, stderr)
			}
			got := strings.Fields(string(out))
			want := []string{c.utc, c.local}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s line %d is stale: oracle now says %v, file has %v; run testdata/tz/gen_oracle_cases.sh",
					oracleCasesFile, c.line, got, want)
			}
		})
	}
}

// TestOracleCasesMatchScript fails if the case list in gen_oracle_cases.sh
// was edited without regenerating oracle_cases.txt.
func TestOracleCasesMatchScript(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile("../../testdata/tz/gen_oracle_cases.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(script), "cases=$(cat <<'EOF'\n")
	if !ok {
		t.Fatal("gen_oracle_cases.sh: case list heredoc not found")
	}
	list, _, ok := strings.Cut(rest, "\nEOF\n")
	if !ok {
		t.Fatal("gen_oracle_cases.sh: case list heredoc not terminated")
	}
	var want []string
	for _, line := range strings.Split(list, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want = append(want, strings.Join(strings.Fields(line), " "))
	}
	var got []string
	for _, c := range readOracleCases(t) {
		got = append(got, strings.Join([]string{c.zone, c.date, c.hhmm, c.kind}, " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s does not match the case list in gen_oracle_cases.sh (%d vs %d cases); run testdata/tz/gen_oracle_cases.sh",
			oracleCasesFile, len(got), len(want))
	}
}

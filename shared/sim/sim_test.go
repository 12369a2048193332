package sim

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSeedsPass runs a few seeds with every fault kind (SIM_N seeds, SIM_FAULTS kinds).
func TestSeedsPass(t *testing.T) {
	kinds, err := ParseKinds(os.Getenv("SIM_FAULTS"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(os.Getenv("SIM_N"))
	n = max(n, 4)
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := RunSeed(context.Background(), seed, kinds)
		if r.Err != nil {
			t.Errorf("seed %d: %d ops, faults %v\n%v", seed, r.Ops, r.Faults, r.Err)
		}
		if r.Checked[InvLocalTime] == 0 || r.Checked[InvOutboxDrained] != 1 {
			t.Errorf("seed %d: invariants not evaluated: %v", seed, r.Checked)
		}
	}
}

// TestResolveMatchesTheOracleCases: the simulator's own reading of the DST product rule gives
// the instants of the committed cases of the independent Python oracle (testdata/tz).
func TestResolveMatchesTheOracleCases(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/tz/oracle_cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		d, err1 := time.Parse(time.DateOnly, f[1])
		want, err2 := time.Parse(time.RFC3339, f[3])
		if err1 != nil || err2 != nil {
			t.Fatalf("bad case %q", line)
		}
		h, m := parseHM(f[2])
		if got := resolve(mustZone(f[0]), d, h, m); !got.Equal(want) {
			t.Errorf("%s: resolve gives %s, the oracle %s", line, got.Format(time.RFC3339), want.Format(time.RFC3339))
		}
		n++
	}
	if n < 50 {
		t.Fatalf("only %d cases read", n)
	}
}

// TestGenerateIsAFunctionOfTheSeed: the same seed gives the same history; another seed
// another one; every kind of operation appears across a few seeds.
func TestGenerateIsAFunctionOfTheSeed(t *testing.T) {
	a, _ := Generate(7).Scenario()
	b, _ := Generate(7).Scenario()
	c, _ := Generate(8).Scenario()
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatal("Generate is not a function of the seed")
	}
	kinds := map[OpKind]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		w := Generate(seed)
		if _, err := w.Parse(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, op := range w.Ops {
			kinds[op.Kind] = true
		}
	}
	for _, k := range []OpKind{OpEvent, OpDelete, OpSendTime, OpDeactivate, OpFault, OpReport, OpRegistry, OpIngest, OpCampaign, OpPoison} {
		if !kinds[k] {
			t.Errorf("no %s operation in 20 seeds", k)
		}
	}
}

// TestChecksCanFail: the always-on invariants report a double effect, an early effect and a
// row whose instant breaks the local-time rule.
func TestChecksCanFail(t *testing.T) {
	sink := &lineSink{effects: map[string][]effect{}}
	line := `{"kind":"delivery","at":"2026-10-03T16:00:00Z","schedulerKey":"k","scheduledOn":"2026-10-03T16:30:00Z","channel":"log","recipient":"a@example.test"}` + "\n"
	sink.Write([]byte(line + line))
	c := &checker{sink: sink, checked: map[string]int{}}
	r := &report{c: c}
	c.safety(r, []row{{key: "r", trig: "DateBased", local: "2026-10-04", localTime: "02:30", zone: "Australia/Sydney",
		scheduledOn: time.Date(2026, 10, 3, 15, 30, 0, 0, time.UTC)}}) // 02:30 in the gap is 16:30Z
	got := map[string]bool{}
	for _, v := range r.vs {
		got[v.Invariant] = true
	}
	for _, inv := range []string{InvOnce, InvNeverEarly, InvLocalTime} {
		if !got[inv] {
			t.Errorf("%s not reported; got %v", inv, r.vs)
		}
	}
}

func TestParseKinds(t *testing.T) {
	all, err := ParseKinds("all")
	if err != nil || len(all) != len(AllKinds) || KindsString(all) != "all" {
		t.Fatalf("all: %v %v", all, err)
	}
	some, err := ParseKinds("lease, restart")
	if err != nil || len(some) != 2 || KindsString(some) != "lease,restart" {
		t.Fatalf("some: %v %v", some, err)
	}
	if none, _ := ParseKinds("none"); KindsString(none) != "none" {
		t.Fatal("none")
	}
	if _, err := ParseKinds("lease,meteor"); err == nil || !strings.Contains(err.Error(), "meteor") {
		t.Fatalf("unknown kind accepted: %v", err)
	}
}

// TestShrinkKeepsTheFailure: Shrink returns a smaller history that still fails with the same
// invariant.
func TestShrinkKeepsTheFailure(t *testing.T) {
	w := Generate(5)
	// A history that fails: an extra gateway batch whose notification the oracle expects
	// but the registry (removed) refuses.
	w = w.without(func(op Op) bool { return op.Kind == OpRegistry })
	w.Ops = append(w.Ops, Op{At: w.Start.Add(time.Hour), Kind: OpRegistry, Raw: []byte(`{"events":[]}`)},
		Op{At: w.Start.Add(2 * time.Hour), Kind: OpIngest, Raw: []byte(`[{"specversion":"1.0","id":"redeem-x","source":"/shop","type":"Redeem_Item","businessunitid":"bu-1","customerid":"C","data":{"email":"x@example.test","item":"v"}}]`), Redeems: []EventRef{{"/shop", "redeem-x"}}})
	none, _ := ParseKinds("none")
	r := RunWorkload(context.Background(), w, none)
	if r.Invariant() != InvGatewayNotify {
		t.Fatalf("want a %s failure, got %v", InvGatewayNotify, r.Err)
	}
	small, runs := Shrink(context.Background(), w, none, r.Invariant(), 40)
	if len(small.Ops) >= len(w.Ops) || runs == 0 {
		t.Fatalf("not shrunk: %d → %d operations", len(w.Ops), len(small.Ops))
	}
	if r := RunWorkload(context.Background(), small, none); r.Invariant() != InvGatewayNotify {
		t.Fatalf("the shrunk history no longer fails: %v", r.Err)
	}
}

// TestRunIsAFunctionOfTheSeed: the same seed injects the same faults and evaluates the same
// assertions (what makes the reproduce command exact).
func TestRunIsAFunctionOfTheSeed(t *testing.T) {
	kinds, _ := ParseKinds("all")
	a := RunSeed(context.Background(), 7, kinds)
	b := RunSeed(context.Background(), 7, kinds)
	if a.Err != nil || b.Err != nil {
		t.Fatal(a.Err, b.Err)
	}
	if joinCounts(a.Faults) != joinCounts(b.Faults) || joinCounts(a.Checked) != joinCounts(b.Checked) {
		t.Fatalf("seed 7 twice:\n%s | %s\n%s | %s", joinCounts(a.Faults), joinCounts(a.Checked), joinCounts(b.Faults), joinCounts(b.Checked))
	}
}

// TestLoyaltyModel: the model counts a visit once (a resent batch adds nothing), takes its
// local day in the unit's zone (23:50 in Sydney is the previous UTC day) and derives the
// streak and its crossings from the sorted local days.
func TestLoyaltyModel(t *testing.T) {
	syd := mustZone("Australia/Sydney")
	v := func(id string, y, m, d, h, min int) Visit {
		return Visit{ID: id, Customer: "C", Time: time.Date(y, time.Month(m), d, h, min, 0, 0, syd).UTC()}
	}
	batch := []Visit{v("a", 2026, 10, 5, 23, 50), v("b", 2026, 10, 6, 0, 10), v("c", 2026, 10, 6, 12, 0)}
	raw := []byte(`[{"businessunitid":"bu-1"},{"businessunitid":"bu-1"},{"businessunitid":"bu-1"}]`)
	w := &Workload{Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC),
		Units: []Unit{{ID: "bu-1", Zone: "Australia/Sydney"}}}
	w.Ops = []Op{{At: w.Start, Kind: OpRegistry}, {At: w.Start.AddDate(0, 0, 6), Kind: OpIngest, Raw: raw, Visits: batch},
		{At: w.Start.AddDate(0, 0, 7), Kind: OpIngest, Raw: raw, Visits: batch}}
	m := w.loyaltyModel()
	if m.total != 3 || m.days["C"]["2026-10-05"] != 1 || m.days["C"]["2026-10-06"] != 2 {
		t.Fatalf("model %+v", m)
	}
	if f, c := streak(map[string]int{"2026-10-05": 1, "2026-10-06": 2, "2026-10-08": 1, "2026-10-09": 1, "2026-10-10": 1}); f != 3 || c != 2 {
		t.Fatalf("streak %d crossings %d, want 3 and 2", f, c)
	}
}

// TestManyInterruptedIsNoFailure: a run stopped by a signal (its context canceled) reports
// the interruption, not a failing seed with a "reproduce" line and a shrunk history.
func TestManyInterruptedIsNoFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	kinds, _ := ParseKinds("all")
	sum := Many(ctx, Options{First: 1, Seeds: 2, Kinds: kinds, Out: &out, Shrink: true})
	if sum.Failed != nil || strings.Contains(out.String(), "FAIL") || !strings.Contains(out.String(), "interrupted") {
		t.Fatalf("failed %v, output:\n%s", sum.Failed, out.String())
	}
}

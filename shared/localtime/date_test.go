package localtime

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseDateValid(t *testing.T) {
	t.Parallel()
	checkParsesBack(t, "ParseDate", ParseDate, []parseCase[Date]{
		{"2026-01-01", Date{2026, time.January, 1}},
		{"2026-12-31", Date{2026, time.December, 31}},
		{"2028-02-29", Date{2028, time.February, 29}}, // leap year
		{"2000-02-29", Date{2000, time.February, 29}}, // divisible by 400
		{"2024-02-29", Date{2024, time.February, 29}},
		{"2026-02-28", Date{2026, time.February, 28}},
		{"2026-04-30", Date{2026, time.April, 30}},
		{"0001-01-01", Date{1, time.January, 1}},
		{"9999-12-31", Date{9999, time.December, 31}},
	}, func(t *testing.T, got Date) {
		if !got.IsValid() || got.IsZero() {
			t.Fatalf("IsValid=%v IsZero=%v for %v", got.IsValid(), got.IsZero(), got)
		}
	})
}

// parseCase is a parser's input and the value it must give.
type parseCase[T any] struct {
	in   string
	want T
}

// checkParsesBack runs each case as a parallel subtest: parse (named name) gives want for in
// without error, the value's String is in again, and more (when not nil) holds of it.
func checkParsesBack[T interface {
	comparable
	String() string
}](t *testing.T, name string, parse func(string) (T, error), cases []parseCase[T], more func(t *testing.T, got T)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := parse(tc.in)
			if err != nil {
				t.Fatalf("%s(%q) error: %v", name, tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("%s(%q) = %#v, want %#v", name, tc.in, got, tc.want)
			}
			if s := got.String(); s != tc.in {
				t.Fatalf("String() = %q, want %q", s, tc.in)
			}
			if more != nil {
				more(t, got)
			}
		})
	}
}

// refuseCase is an input a parser refuses and a substring of its error besides the quoted
// input.
type refuseCase struct {
	in      string
	wantMsg string
}

// checkRefuses runs each case as a parallel subtest: parse (named name) refuses in with the
// zero value and an error that quotes in and mentions wantMsg (checkParseError).
func checkRefuses[T comparable](t *testing.T, name string, parse func(string) (T, error), cases []refuseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := parse(tc.in)
			if err == nil {
				t.Fatalf("%s(%q) = %v, want error", name, tc.in, got)
			}
			var zero T
			if got != zero {
				t.Errorf("%s(%q) returned non-zero value %#v with error", name, tc.in, got)
			}
			checkParseError(t, err, tc.in, tc.wantMsg)
		})
	}
}

func TestParseDateInvalid(t *testing.T) {
	t.Parallel()
	checkRefuses(t, "ParseDate", ParseDate, []refuseCase{
		{"2027-02-29", "day 29 out of range"}, // 2027 is a common year
		{"2027-02-30", "day 30 out of range"},
		{"2026-02-30", "day 30 out of range"},
		{"2026-04-31", "day 31 out of range"},
		{"2026-06-31", "day 31"},
		{"1900-02-29", "day 29"}, // divisible by 100, not by 400
		{"2026-13-01", "month 13"},
		{"2026-00-10", "month 0"},
		{"2026-01-00", "day 0"},
		{"2026-01-32", "day 32"},
		{"0000-01-01", "year"},
		{"2026-1-01", "YYYY-MM-DD"},
		{"2026-01-1", "YYYY-MM-DD"},
		{"26-01-01", "YYYY-MM-DD"},
		{"", "YYYY-MM-DD"},
		{"2026-01-01T00:00", "YYYY-MM-DD"},
		{"2026-01-01 ", "YYYY-MM-DD"},
		{" 2026-01-01", "YYYY-MM-DD"},
		{"2026/01/01", "YYYY-MM-DD"},
		{"20260101", "YYYY-MM-DD"},
		{"2026-+1-01", "YYYY-MM-DD"},
		{"+026-01-01", "YYYY-MM-DD"},
		{"2026-01-0a", "YYYY-MM-DD"},
		{"２026-01-01", "YYYY-MM-DD"}, // full-width digit
		{"12026-01-01", "YYYY-MM-DD"},
	})
}

// checkParseError checks that err, a parser's refusal of in, quotes in and mentions want.
func checkParseError(t *testing.T, err error, in, want string) {
	t.Helper()
	msg := err.Error()
	if !strings.Contains(msg, strconv.Quote(in)) {
		t.Errorf("error %q does not quote the input %q", msg, in)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("error %q does not mention %q", msg, want)
	}
}

func TestMustDate(t *testing.T) {
	t.Parallel()
	if got := MustDate("2026-10-04"); got != (Date{2026, time.October, 4}) {
		t.Fatalf("MustDate = %#v", got)
	}
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("MustDate(\"2026-02-30\") did not panic")
		}
		if !strings.Contains(r.(error).Error(), `"2026-02-30"`) {
			t.Fatalf("panic value %v does not quote the input", r)
		}
	}()
	MustDate("2026-02-30")
}

func TestDateString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    Date
		want string
	}{
		{Date{2026, 3, 8}, "2026-03-08"},
		{Date{987, 12, 1}, "0987-12-01"},
		{Date{}, "0000-00-00"},
	}
	for _, tc := range tests {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestDateAddDays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from string
		n    int
		want string
	}{
		{"2026-01-31", 1, "2026-02-01"},
		{"2026-02-28", 1, "2026-03-01"}, // common year
		{"2028-02-28", 1, "2028-02-29"}, // leap year
		{"2028-02-29", 1, "2028-03-01"},
		{"2028-03-01", -1, "2028-02-29"},
		{"2026-03-01", -1, "2026-02-28"},
		{"2026-12-31", 1, "2027-01-01"},
		{"2027-01-01", -1, "2026-12-31"},
		{"2026-04-30", 1, "2026-05-01"},
		{"2026-01-15", 0, "2026-01-15"},
		{"2026-01-01", 365, "2027-01-01"},
		{"2028-01-01", 366, "2029-01-01"},
		{"2026-01-01", -365, "2025-01-01"},
		{"2024-02-29", 365, "2025-02-28"},
		// DST days are ordinary calendar days.
		{"2026-10-03", 1, "2026-10-04"}, // Sydney spring forward (23h local day)
		{"2026-04-04", 1, "2026-04-05"}, // Sydney fall back (25h local day)
		{"2026-03-07", 1, "2026-03-08"}, // New York spring forward
		{"2026-11-01", -1, "2026-10-31"},
		{"2011-12-29", 1, "2011-12-30"}, // a day Apia skipped still exists as a Date
		{"2011-12-29", 2, "2011-12-31"},
	}
	for _, tc := range tests {
		name := tc.from + "+" + strconv.Itoa(tc.n)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := MustDate(tc.from).AddDays(tc.n).String(); got != tc.want {
				t.Fatalf("%s.AddDays(%d) = %s, want %s", tc.from, tc.n, got, tc.want)
			}
		})
	}
}

// AddDays plus Resolve gives the same local wall time on the next calendar
// day, which is not 24h later across a DST change.
func TestAddDaysAcrossDSTIsNot24h(t *testing.T) {
	t.Parallel()
	nineAM := TimeOfDay{9, 0}
	tests := []struct {
		zone string
		from string
		want time.Duration
	}{
		{"Australia/Sydney", "2026-10-03", 23 * time.Hour},                   // spring forward
		{"Australia/Sydney", "2026-04-04", 25 * time.Hour},                   // fall back
		{"America/New_York", "2026-03-07", 23 * time.Hour},                   // spring forward
		{"America/New_York", "2026-10-31", 25 * time.Hour},                   // fall back
		{"Australia/Lord_Howe", "2026-10-03", 23*time.Hour + 30*time.Minute}, // 30-minute shift
		{"Pacific/Apia", "2011-12-29", 24 * time.Hour},                       // 2011-12-30 skipped: 29th 09:00 -> (30th 09:00 => 31st 09:00)
		{"Asia/Kathmandu", "2026-10-03", 24 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.zone+"/"+tc.from, func(t *testing.T) {
			t.Parallel()
			loc := mustZone(t, tc.zone)
			d := MustDate(tc.from)
			got := Resolve(loc, d.AddDays(1), nineAM).Sub(Resolve(loc, d, nineAM))
			if got != tc.want {
				t.Fatalf("09:00 %s -> 09:00 next day = %v, want %v", tc.from, got, tc.want)
			}
		})
	}
}

func TestDateCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"2026-01-01", "2026-01-01", 0},
		{"2026-01-01", "2026-01-02", -1},
		{"2026-02-01", "2026-01-31", 1},
		{"2025-12-31", "2026-01-01", -1},
		{"2027-01-01", "2026-12-31", 1},
		{"2026-10-04", "2026-04-05", 1},
	}
	for _, tc := range tests {
		a, b := MustDate(tc.a), MustDate(tc.b)
		if got := a.Compare(b); got != tc.want {
			t.Errorf("%s.Compare(%s) = %d, want %d", a, b, got, tc.want)
		}
		if got := b.Compare(a); got != -tc.want {
			t.Errorf("%s.Compare(%s) = %d, want %d", b, a, got, -tc.want)
		}
		if got := a.Before(b); got != (tc.want < 0) {
			t.Errorf("%s.Before(%s) = %v", a, b, got)
		}
		if got := a.After(b); got != (tc.want > 0) {
			t.Errorf("%s.After(%s) = %v", a, b, got)
		}
	}
}

func TestDateIsZero(t *testing.T) {
	t.Parallel()
	if !(Date{}).IsZero() {
		t.Error("Date{}.IsZero() = false")
	}
	if (Date{}).IsValid() {
		t.Error("Date{}.IsValid() = true")
	}
	if MustDate("0001-01-01").IsZero() {
		t.Error("0001-01-01 IsZero() = true")
	}
	if (Date{Year: 2026}).IsZero() {
		t.Error("Date{Year: 2026}.IsZero() = true")
	}
}

func TestDateOf(t *testing.T) {
	t.Parallel()
	// 2026-10-03T14:00Z is just before Sydney's spring-forward (16:00Z).
	instant := time.Date(2026, 10, 3, 14, 0, 0, 0, time.UTC)
	late := time.Date(2026, 10, 3, 23, 30, 0, 0, time.UTC)
	tests := []struct {
		t    time.Time
		zone string
		want string
	}{
		{instant, "UTC", "2026-10-03"},
		{instant, "Australia/Sydney", "2026-10-04"},   // +10: 00:00 local
		{instant, "America/New_York", "2026-10-03"},   // -04: 10:00
		{instant, "Asia/Kathmandu", "2026-10-03"},     // +05:45: 19:45
		{instant, "Pacific/Kiritimati", "2026-10-04"}, // +14: 04:00
		{instant, "Pacific/Pago_Pago", "2026-10-03"},  // -11: 03:00
		{late, "Pacific/Honolulu", "2026-10-03"},      // -10: 13:30
		{late, "Pacific/Auckland", "2026-10-04"},      // +13 (NZDT): 12:30
		{late, "Asia/Ho_Chi_Minh", "2026-10-04"},      // +07: 06:30
		{late, "Europe/London", "2026-10-04"},         // +01: 00:30
		{time.Date(2026, 10, 3, 13, 59, 0, 0, time.UTC), "Australia/Sydney", "2026-10-03"},
		// The zone attached to t does not matter, only the instant.
		{instant.In(time.FixedZone("X", -12*3600)), "Australia/Sydney", "2026-10-04"},
	}
	for _, tc := range tests {
		t.Run(tc.zone+"@"+tc.t.Format(time.RFC3339), func(t *testing.T) {
			t.Parallel()
			if got := DateOf(tc.t, mustZone(t, tc.zone)).String(); got != tc.want {
				t.Fatalf("DateOf(%s, %s) = %s, want %s", tc.t.Format(time.RFC3339), tc.zone, got, tc.want)
			}
		})
	}
}

func TestAnniversaryIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		orig string
		year int
		want string
	}{
		{"2024-02-29", 2025, "2025-02-28"},
		{"2024-02-29", 2026, "2026-02-28"},
		{"2024-02-29", 2028, "2028-02-29"},
		{"2024-02-29", 2100, "2100-02-28"}, // not a leap year
		{"2024-02-29", 2400, "2400-02-29"},
		{"2024-02-29", 2024, "2024-02-29"},
		{"2025-02-28", 2028, "2028-02-28"},
		{"2026-03-01", 2028, "2028-03-01"},
		{"2026-10-04", 2027, "2027-10-04"},
		{"2026-12-31", 2020, "2020-12-31"},
		{"2026-01-31", 2027, "2027-01-31"},
	}
	for _, tc := range tests {
		if got := AnniversaryIn(MustDate(tc.orig), tc.year).String(); got != tc.want {
			t.Errorf("AnniversaryIn(%s, %d) = %s, want %s", tc.orig, tc.year, got, tc.want)
		}
	}
}

func TestDateTimeOfDayJSON(t *testing.T) {
	t.Parallel()
	type row struct {
		D   Date      `json:"d"`
		T   TimeOfDay `json:"t"`
		Opt Date      `json:"opt,omitzero"`
	}
	in := row{D: MustDate("2026-10-04"), T: TimeOfDay{2, 30}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"d":"2026-10-04","t":"02:30"}`; string(b) != want {
		t.Fatalf("json = %s, want %s", b, want)
	}
	var out row
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip = %#v, want %#v", out, in)
	}
	// Map keys use the text marshaler too.
	mb, err := json.Marshal(map[Date]int{MustDate("2028-02-29"): 1})
	if err != nil || string(mb) != `{"2028-02-29":1}` {
		t.Fatalf("map json = %s, %v", mb, err)
	}

	bad := []struct{ js, quoted string }{
		{`{"d":"2027-02-29","t":"09:00"}`, `"2027-02-29"`},
		{`{"d":"2026-1-01","t":"09:00"}`, `"2026-1-01"`},
		{`{"d":"2026-01-01","t":"25:00"}`, `"25:00"`},
		{`{"d":"2026-01-01","t":"9:00"}`, `"9:00"`},
	}
	for _, tc := range bad {
		var r row
		err := json.Unmarshal([]byte(tc.js), &r)
		if err == nil || !strings.Contains(err.Error(), tc.quoted) {
			t.Errorf("Unmarshal(%s) error = %v, want one quoting %s", tc.js, err, tc.quoted)
		}
	}

	// Invalid values refuse to marshal rather than emit unparsable text.
	if _, err := json.Marshal(struct{ D Date }{}); err == nil {
		t.Error("marshalling zero Date without omitzero succeeded")
	}
	if _, err := json.Marshal(Date{2026, 2, 30}); err == nil {
		t.Error("marshalling 2026-02-30 succeeded")
	}
	if _, err := json.Marshal(TimeOfDay{24, 0}); err == nil {
		t.Error("marshalling 24:00 succeeded")
	}
}

func TestUnmarshalTextLeavesValueOnError(t *testing.T) {
	t.Parallel()
	d := MustDate("2026-10-04")
	if err := d.UnmarshalText([]byte("2026-02-30")); err == nil {
		t.Fatal("UnmarshalText(2026-02-30) succeeded")
	}
	if d != MustDate("2026-10-04") {
		t.Fatalf("date changed on error: %v", d)
	}
	tod := TimeOfDay{9, 15}
	if err := tod.UnmarshalText([]byte("09:60")); err == nil {
		t.Fatal("UnmarshalText(09:60) succeeded")
	}
	if tod != (TimeOfDay{9, 15}) {
		t.Fatalf("time of day changed on error: %v", tod)
	}
}

func mustZone(t testing.TB, id string) *time.Location {
	t.Helper()
	loc, err := LoadZone(id)
	if err != nil {
		t.Fatalf("LoadZone(%q): %v", id, err)
	}
	return loc
}

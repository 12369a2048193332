package localtime

import (
	"testing"
)

func TestParseTimeOfDayValid(t *testing.T) {
	t.Parallel()
	checkParsesBack(t, "ParseTimeOfDay", ParseTimeOfDay, []parseCase[TimeOfDay]{
		{"00:00", TimeOfDay{0, 0}},
		{"09:00", TimeOfDay{9, 0}},
		{"02:30", TimeOfDay{2, 30}},
		{"12:05", TimeOfDay{12, 5}},
		{"23:59", TimeOfDay{23, 59}},
	}, func(t *testing.T, got TimeOfDay) {
		b, err := got.MarshalText()
		if err != nil || string(b) != got.String() {
			t.Fatalf("MarshalText() = %q, %v", b, err)
		}
	})
}

func TestParseTimeOfDayInvalid(t *testing.T) {
	t.Parallel()
	checkRefuses(t, "ParseTimeOfDay", ParseTimeOfDay, []refuseCase{
		{"25:00", "hour 25 out of range"},
		{"24:00", "hour 24 out of range"},
		{"09:60", "minute 60 out of range"},
		{"99:99", "hour 99"},
		{"9:00", "HH:MM"},
		{"09:0", "HH:MM"},
		{"0900", "HH:MM"},
		{"09.00", "HH:MM"},
		{"09:00:00", "HH:MM"},
		{"09:00 ", "HH:MM"},
		{" 9:00", "HH:MM"},
		{"", "HH:MM"},
		{"-1:00", "HH:MM"},
		{"+9:00", "HH:MM"},
		{"0x:00", "HH:MM"},
		{"９:00", "HH:MM"},
		{"9am", "HH:MM"},
	})
}

func TestTimeOfDayIsValid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		t    TimeOfDay
		want bool
	}{
		{TimeOfDay{}, true},
		{TimeOfDay{23, 59}, true},
		{TimeOfDay{24, 0}, false},
		{TimeOfDay{-1, 0}, false},
		{TimeOfDay{12, 60}, false},
		{TimeOfDay{12, -1}, false},
	} {
		if got := tc.t.IsValid(); got != tc.want {
			t.Errorf("%#v.IsValid() = %v, want %v", tc.t, got, tc.want)
		}
	}
}

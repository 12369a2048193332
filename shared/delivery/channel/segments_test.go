package channel_test

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/delivery/channel"
)

func TestSMSSegments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       channel.SMSLength
	}{
		{"empty", "", channel.SMSLength{Encoding: "GSM-7", Units: 0, Segments: 0}},
		{"160 septets", strings.Repeat("a", 160), channel.SMSLength{Encoding: "GSM-7", Units: 160, Segments: 1}},
		{"161 septets", strings.Repeat("a", 161), channel.SMSLength{Encoding: "GSM-7", Units: 161, Segments: 2}},
		{"306 septets", strings.Repeat("a", 306), channel.SMSLength{Encoding: "GSM-7", Units: 306, Segments: 2}},
		{"307 septets", strings.Repeat("a", 307), channel.SMSLength{Encoding: "GSM-7", Units: 307, Segments: 3}},
		{"extension characters take two", strings.Repeat("a", 158) + "€", channel.SMSLength{Encoding: "GSM-7", Units: 160, Segments: 1}},
		{"one extension too many", strings.Repeat("a", 159) + "€", channel.SMSLength{Encoding: "GSM-7", Units: 161, Segments: 2}},
		{"GSM accents stay GSM-7", "Café à Zürich", channel.SMSLength{Encoding: "GSM-7", Units: 13, Segments: 1}},
		{"Vietnamese is UCS-2", "Bạn được cộng 120 điểm", channel.SMSLength{Encoding: "UCS-2", Units: 22, Segments: 1}},
		{"70 UCS-2 units", strings.Repeat("ố", 70), channel.SMSLength{Encoding: "UCS-2", Units: 70, Segments: 1}},
		{"71 UCS-2 units", strings.Repeat("ố", 71), channel.SMSLength{Encoding: "UCS-2", Units: 71, Segments: 2}},
		{"134 UCS-2 units", strings.Repeat("ố", 134), channel.SMSLength{Encoding: "UCS-2", Units: 134, Segments: 2}},
		{"an emoji is two units", strings.Repeat("a", 69) + "😀", channel.SMSLength{Encoding: "UCS-2", Units: 71, Segments: 2}},
	}
	for _, c := range cases {
		if got := channel.SMSSegments(c.text); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

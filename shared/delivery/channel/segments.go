package channel

import "unicode/utf16"

// SMS encodings.
const (
	EncodingGSM7 = "GSM-7"
	EncodingUCS2 = "UCS-2"
)

// gsm7Basic is the GSM 03.38 default alphabet (one septet each), without the escape.
const gsm7Basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ\u00a7¿abcdefghijklmnopqrstuvwxyzäöñüà"

// gsm7Extension is the GSM 03.38 extension table: each character is the escape and itself,
// two septets.
const gsm7Extension = "\f^{}\\[~]|€"

var gsm7Units = func() map[rune]int {
	m := map[rune]int{}
	for _, r := range gsm7Basic {
		m[r] = 1
	}
	for _, r := range gsm7Extension {
		m[r] = 2
	}
	return m
}()

// SMSLength is how a text travels as SMS: its encoding, its length in that encoding's
// units (GSM-7 septets, UCS-2 16-bit code units) and the number of segments it is sent
// (and billed) as.
type SMSLength struct {
	Encoding string `json:"encoding"`
	Units    int    `json:"units"`
	Segments int    `json:"segments"`
}

// SMSSegments measures text: GSM-7 when every character is in the GSM 03.38 default
// alphabet or its extension (an extension character takes two septets), else UCS-2 (a
// character outside the Basic Multilingual Plane takes two units, as in UTF-16). One segment
// holds 160 septets or 70 UCS-2 units; a longer text is split into segments of 153 or 67
// (the rest carries the concatenation header, 3GPP TS 23.040). An empty text is 0 segments.
func SMSSegments(text string) SMSLength {
	septets, gsm := 0, true
	for _, r := range text {
		u, ok := gsm7Units[r]
		if !ok {
			gsm = false
			break
		}
		septets += u
	}
	if gsm {
		return SMSLength{Encoding: EncodingGSM7, Units: septets, Segments: segments(septets, 160, 153)}
	}
	units := len(utf16.Encode([]rune(text)))
	return SMSLength{Encoding: EncodingUCS2, Units: units, Segments: segments(units, 70, 67)}
}

func segments(units, single, multi int) int {
	switch {
	case units == 0:
		return 0
	case units <= single:
		return 1
	}
	return (units + multi - 1) / multi
}

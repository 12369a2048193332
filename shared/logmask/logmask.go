package logmask

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
)

var (
	// An address, its @ possibly percent-encoded (%40) as in a URL's query.
	emailRE = regexp.MustCompile(`[A-Za-z0-9._%+\-]+(?:@|%40)[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)
	// Phone-like: an optional +, then 8 or more digits possibly separated by spaces, dots,
	// dashes or parentheses.
	phoneRE = regexp.MustCompile(`\+?\(?\d(?:[\s.\-()]*\d){7,}`)
	// isoDate is a date as the pipeline writes them ("2027-03-20"): eight digits, but no phone.
	isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	// Identifiers that look numeric but are not personal data are left alone when they are
	// part of a longer token (GUIDs, RFC 3339 instants, keys).
	tokenChar = func(b byte) bool {
		return b == '-' || b == ':' || b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
	}
)

// String masks e-mail addresses ("amelia.nguyen@example.test" → "a***@example.test", also
// percent-encoded in URLs: "a***%40example.test") and phone numbers ("+61 412 345 678",
// "tel:+61412345678", "to=%2B61412345678" → "***5678") in s.
func String(s string) string {
	if strings.IndexByte(s, '@') >= 0 || strings.Contains(s, "%40") {
		s = emailRE.ReplaceAllStringFunc(s, func(m string) string {
			at := strings.LastIndexByte(m, '@')
			if at < 0 {
				at = strings.LastIndex(m, "%40")
			}
			return m[:1] + "***" + m[at:]
		})
	}
	locs := phoneRE.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		start, end := l[0], l[1]
		if start >= 3 && strings.EqualFold(s[start-3:start], "%2B") { // a percent-encoded "+"
			start -= 3
		}
		// Part of a longer identifier or timestamp: not a phone number — unless a colon
		// introduces it as one: an international number ("phone:+61…") or a tel: URI.
		if (start > 0 && tokenChar(s[start-1]) && !phoneAfterColon(s, start)) || (end < len(s) && tokenChar(s[end])) {
			continue
		}
		if isoDate.MatchString(s[start:end]) { // a calendar date (YYYY-MM-DD), not a phone number
			continue
		}
		digits := 0
		for i := start; i < end; i++ {
			if s[i] >= '0' && s[i] <= '9' {
				digits++
			}
		}
		if digits > 15 { // longer than E.164: an id, not a phone number
			continue
		}
		b.WriteString(s[last:start])
		tail := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s[start:end])
		b.WriteString("***" + tail[len(tail)-4:])
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// phoneAfterColon reports whether the number starting at s[start] follows a colon that makes
// it a phone number: it is in international form ("+…", "%2B…") or the colon ends a tel: or
// sms: scheme. Keys and instants never have a "+" and eight digits after a colon.
func phoneAfterColon(s string, start int) bool {
	if s[start-1] != ':' {
		return false
	}
	if s[start] == '+' || s[start] == '%' {
		return true
	}
	if start < 4 || (start > 4 && isLetter(s[start-5])) { // the scheme is a whole word
		return false
	}
	scheme := strings.ToLower(s[start-4 : start-1])
	return scheme == "tel" || scheme == "sms"
}

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

// Handler wraps another slog.Handler.
type Handler struct{ next slog.Handler }

// New returns a masking handler in front of next.
func New(next slog.Handler) *Handler { return &Handler{next: next} }

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(maskAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = maskAttr(a)
	}
	return &Handler{next: h.next.WithAttrs(masked)}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler { return &Handler{next: h.next.WithGroup(name)} }

func maskAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = maskAttr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, String(err.Error()))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, String(s.String()))
		}
		return a
	default:
		return a
	}
}

package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/events"
)

// validEvent returns a fresh, valid structured-mode CloudEvent as a JSON-ready map; cases
// mutate their own copy.
func validEvent() map[string]any {
	return map[string]any{
		"specversion":     "1.0",
		"id":              "evt-0001",
		"source":          "/hr/staff",
		"type":            "com.example.staff.updated",
		"subject":         "staff/8c1f",
		"time":            "2026-03-14T09:30:00+11:00",
		"datacontenttype": "application/json",
		"businessunitid":  "bu-42",
		"entitytype":      "Staff",
		"entityguid":      "8c1f6a8e-3f1b-4c55-9b7e-2d1c0a9e7f10",
		"revision":        7,
		"data": map[string]any{
			"name":           "Ada",
			"policeCheckExp": "2027-03-14",
			"hours":          37.5,
		},
	}
}

func encode(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

func with(mutate func(m map[string]any)) map[string]any {
	m := validEvent()
	mutate(m)
	return m
}

func TestParseValid(t *testing.T) {
	t.Parallel()
	base := events.Event{
		ID:             "evt-0001",
		Source:         "/hr/staff",
		Type:           "com.example.staff.updated",
		Subject:        "staff/8c1f",
		Time:           time.Date(2026, 3, 13, 22, 30, 0, 0, time.UTC),
		BusinessUnitID: "bu-42",
		EntityType:     "Staff",
		EntityGuid:     "8c1f6a8e-3f1b-4c55-9b7e-2d1c0a9e7f10",
		Revision:       7,
		Data: map[string]any{
			"name":           "Ada",
			"policeCheckExp": "2027-03-14",
			"hours":          json.Number("37.5"),
		},
		DataJSON: `{"hours":37.5,"name":"Ada","policeCheckExp":"2027-03-14"}`,
	}
	tests := []struct {
		name string
		in   []byte
		want func(e events.Event) events.Event
	}{
		{
			name: "all fields",
			in:   encode(t, validEvent()),
			want: func(e events.Event) events.Event { return e },
		},
		{
			name: "revision as string",
			in:   encode(t, with(func(m map[string]any) { m["revision"] = "123" })),
			want: func(e events.Event) events.Event { e.Revision = 123; return e },
		},
		{
			name: "revision zero",
			in:   encode(t, with(func(m map[string]any) { m["revision"] = 0 })),
			want: func(e events.Event) events.Event { e.Revision = 0; return e },
		},
		{
			name: "revision max int64 as number",
			in:   []byte(strings.Replace(string(encode(t, validEvent())), `"revision":7`, `"revision":9223372036854775807`, 1)),
			want: func(e events.Event) events.Event { e.Revision = 1<<63 - 1; return e },
		},
		{
			name: "revision beyond 32 bits as string",
			in:   encode(t, with(func(m map[string]any) { m["revision"] = "4294967297" })),
			want: func(e events.Event) events.Event { e.Revision = 4294967297; return e },
		},
		{
			name: "no time, no subject, no datacontenttype",
			in: encode(t, with(func(m map[string]any) {
				delete(m, "time")
				delete(m, "subject")
				delete(m, "datacontenttype")
			})),
			want: func(e events.Event) events.Event { e.Time = time.Time{}; e.Subject = ""; return e },
		},
		{
			name: "time null is absent",
			in:   encode(t, with(func(m map[string]any) { m["time"] = nil })),
			want: func(e events.Event) events.Event { e.Time = time.Time{}; return e },
		},
		{
			name: "time with fractional seconds in UTC",
			in:   encode(t, with(func(m map[string]any) { m["time"] = "2026-03-13T22:30:00.123456789Z" })),
			want: func(e events.Event) events.Event { e.Time = e.Time.Add(123456789); return e },
		},
		{
			name: "datacontenttype with charset",
			in:   encode(t, with(func(m map[string]any) { m["datacontenttype"] = "application/json; charset=utf-8" })),
			want: func(e events.Event) events.Event { return e },
		},
		{
			name: "nested data object",
			in: encode(t, with(func(m map[string]any) {
				m["data"] = map[string]any{"a": map[string]any{"b": []any{1, "x"}}}
			})),
			want: func(e events.Event) events.Event {
				e.Data = map[string]any{"a": map[string]any{"b": []any{json.Number("1"), "x"}}}
				e.DataJSON = `{"a":{"b":[1,"x"]}}`
				return e
			},
		},
		{
			name: "empty data object",
			in:   encode(t, with(func(m map[string]any) { m["data"] = map[string]any{} })),
			want: func(e events.Event) events.Event { e.Data = map[string]any{}; e.DataJSON = `{}`; return e },
		},
		{
			name: "surrounding whitespace",
			in:   append(append([]byte(" \n\t"), encode(t, validEvent())...), '\n'),
			want: func(e events.Event) events.Event { return e },
		},
		{
			name: "deleted with data null",
			in: encode(t, with(func(m map[string]any) {
				m["type"] = "com.example.staff.deleted"
				m["data"] = nil
			})),
			want: func(e events.Event) events.Event {
				e.Type, e.Deleted, e.Data, e.DataJSON = "com.example.staff.deleted", true, map[string]any{}, "{}"
				return e
			},
		},
		{
			name: "deleted without data",
			in: encode(t, with(func(m map[string]any) {
				m["type"] = "com.example.staff.deleted"
				delete(m, "data")
			})),
			want: func(e events.Event) events.Event {
				e.Type, e.Deleted, e.Data, e.DataJSON = "com.example.staff.deleted", true, map[string]any{}, "{}"
				return e
			},
		},
		{
			name: "deleted keeps its last fields",
			in: encode(t, with(func(m map[string]any) {
				m["type"] = "com.example.staff.deleted"
				m["data"] = map[string]any{"name": "Ada"}
			})),
			want: func(e events.Event) events.Event {
				e.Type, e.Deleted = "com.example.staff.deleted", true
				e.Data, e.DataJSON = map[string]any{"name": "Ada"}, `{"name":"Ada"}`
				return e
			},
		},
		{
			name: "deleted only as a suffix",
			in:   encode(t, with(func(m map[string]any) { m["type"] = "com.example.deleted.staff" })),
			want: func(e events.Event) events.Event { e.Type = "com.example.deleted.staff"; return e },
		},
		{
			name: "token characters",
			in: encode(t, with(func(m map[string]any) {
				m["businessunitid"] = "A.b_c~d@e+f/g-1"
				m["entitytype"] = "hr/Staff.v2"
			})),
			want: func(e events.Event) events.Event {
				e.BusinessUnitID, e.EntityType = "A.b_c~d@e+f/g-1", "hr/Staff.v2"
				return e
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := events.Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse: %v\ninput: %s", err, tt.in)
			}
			want := tt.want(base)
			if !got.Time.Equal(want.Time) || got.Time.IsZero() != want.Time.IsZero() {
				t.Errorf("Time = %v, want %v", got.Time, want.Time)
			}
			if !got.Time.IsZero() && got.Time.Location() != time.UTC {
				t.Errorf("Time location = %v, want UTC", got.Time.Location())
			}
			got.Time, want.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parse mismatch\n got: %#v\nwant: %#v", got, want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	valid := string(func() []byte {
		b, _ := json.Marshal(validEvent())
		return b
	}())
	tests := []struct {
		name  string
		in    []byte
		field string
	}{
		{"empty", []byte(""), "event"},
		{"not JSON", []byte("hello"), "event"},
		{"truncated JSON", []byte(valid[:len(valid)/2]), "event"},
		{"JSON array", []byte(`[` + valid + `]`), "event"},
		{"JSON string", []byte(`"x"`), "event"},
		{"JSON null", []byte(`null`), "event"},
		{"missing specversion", encode(t, with(func(m map[string]any) { delete(m, "specversion") })), "specversion"},
		{"specversion 0.3", encode(t, with(func(m map[string]any) { m["specversion"] = "0.3" })), "specversion"},
		{"specversion 2.0", encode(t, with(func(m map[string]any) { m["specversion"] = "2.0" })), "specversion"},
		{"missing id", encode(t, with(func(m map[string]any) { delete(m, "id") })), "id"},
		{"empty id", encode(t, with(func(m map[string]any) { m["id"] = "" })), "id"},
		{"missing source", encode(t, with(func(m map[string]any) { delete(m, "source") })), "source"},
		// An id with a control character is refused on the domain-events path as POST
		// /api/events refuses it (issue 33): it would reach the ledgers, logs and console.
		{"id with NUL", encode(t, with(func(m map[string]any) { m["id"] = "a\x00b" })), "id"},
		{"id with a tab", encode(t, with(func(m map[string]any) { m["id"] = "a\tb" })), "id"},
		{"id with DEL", encode(t, with(func(m map[string]any) { m["id"] = "a\x7fb" })), "id"},
		{"id with a C1 control (NEL)", encode(t, with(func(m map[string]any) { m["id"] = "a\u0085b" })), "id"},
		{"subject with a newline", encode(t, with(func(m map[string]any) { m["subject"] = "a\nb" })), "subject"},
		{"missing type", encode(t, with(func(m map[string]any) { delete(m, "type") })), "type"},
		{"missing businessunitid", encode(t, with(func(m map[string]any) { delete(m, "businessunitid") })), "businessunitid"},
		{"empty businessunitid", encode(t, with(func(m map[string]any) { m["businessunitid"] = "" })), "businessunitid"},
		{"missing entitytype", encode(t, with(func(m map[string]any) { delete(m, "entitytype") })), "entitytype"},
		{"missing entityguid", encode(t, with(func(m map[string]any) { delete(m, "entityguid") })), "entityguid"},
		{"entityguid with space", encode(t, with(func(m map[string]any) { m["entityguid"] = "8c1f 6a8e" })), "entityguid"},
		{"entityguid with colon", encode(t, with(func(m map[string]any) { m["entityguid"] = "8c1f:6a8e" })), "entityguid"},
		{"entityguid too long", encode(t, with(func(m map[string]any) { m["entityguid"] = strings.Repeat("a", 201) })), "entityguid"},
		{"missing revision", encode(t, with(func(m map[string]any) { delete(m, "revision") })), "revision"},
		{"revision -1", encode(t, with(func(m map[string]any) { m["revision"] = -1 })), "revision"},
		{"revision 1.5", encode(t, with(func(m map[string]any) { m["revision"] = 1.5 })), "revision"},
		{"revision abc", encode(t, with(func(m map[string]any) { m["revision"] = "abc" })), "revision"},
		{"revision empty string", encode(t, with(func(m map[string]any) { m["revision"] = "" })), "revision"},
		{"revision -1 as string", encode(t, with(func(m map[string]any) { m["revision"] = "-1" })), "revision"},
		{"revision null", encode(t, with(func(m map[string]any) { m["revision"] = nil })), "revision"},
		{"revision true", encode(t, with(func(m map[string]any) { m["revision"] = true })), "revision"},
		{"revision 1e3", []byte(strings.Replace(valid, `"revision":7`, `"revision":1e3`, 1)), "revision"},
		{"revision overflows int64", []byte(strings.Replace(valid, `"revision":7`, `"revision":99999999999999999999`, 1)), "revision"},
		{"revision 2^63 as string", encode(t, with(func(m map[string]any) { m["revision"] = "9223372036854775808" })), "revision"},
		{"data missing", encode(t, with(func(m map[string]any) { delete(m, "data") })), "data"},
		{"data null on non-deleted event", encode(t, with(func(m map[string]any) { m["data"] = nil })), "data"},
		{"data array", encode(t, with(func(m map[string]any) { m["data"] = []any{1, 2} })), "data"},
		{"data string", encode(t, with(func(m map[string]any) { m["data"] = "hello" })), "data"},
		{"data number", encode(t, with(func(m map[string]any) { m["data"] = 42 })), "data"},
		{"data array on deleted event", encode(t, with(func(m map[string]any) {
			m["type"] = "com.example.staff.deleted"
			m["data"] = []any{}
		})), "data"},
		{"datacontenttype text/plain", encode(t, with(func(m map[string]any) { m["datacontenttype"] = "text/plain" })), "datacontenttype"},
		{"data_base64", encode(t, with(func(m map[string]any) {
			delete(m, "data")
			m["data_base64"] = "eyJhIjoxfQ=="
		})), "data_base64"},
		{"id as number", encode(t, with(func(m map[string]any) { m["id"] = 12 })), "id"},
		{"type null", encode(t, with(func(m map[string]any) { m["type"] = nil })), "type"},
		{"specversion as number", encode(t, with(func(m map[string]any) { m["specversion"] = 1.0 })), "specversion"},
		{"datacontenttype application/xml", encode(t, with(func(m map[string]any) { m["datacontenttype"] = "application/xml" })), "datacontenttype"},
		{"bad time", encode(t, with(func(m map[string]any) { m["time"] = "yesterday" })), "time"},
		{"time without zone", encode(t, with(func(m map[string]any) { m["time"] = "2026-03-14T09:30:00" })), "time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := events.Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want an invalid-input error about %q\ninput: %s", ev, tt.field, tt.in)
			}
			if !automation.IsInvalid(err) {
				t.Fatalf("error %v: code %s, want %s", err, automation.CodeOf(err), automation.CodeInvalidInput)
			}
			var ae *automation.Error
			if !errors.As(err, &ae) || ae.Field != tt.field {
				t.Errorf("error %q names field %q, want %q", err, fieldOf(err), tt.field)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not mention %q", err, tt.field)
			}
		})
	}
}

var fieldOf = automationtest.FieldOf

// record is a handler that appends its name to a shared log and returns err.
type recorder struct{ log []string }

func (r *recorder) handler(name string, err error) events.Handler {
	return events.HandlerFunc(func(_ context.Context, ev events.Event) error {
		r.log = append(r.log, name+":"+ev.ID)
		return err
	})
}

func TestRouterDispatch(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	type reg struct {
		entityType string // "*" = RegisterAll
		name       string
		err        error
	}
	tests := []struct {
		name       string
		regs       []reg
		entityType string
		wantLog    []string
		wantErr    error
	}{
		{
			name: "type handlers before all handlers, each in registration order",
			regs: []reg{
				{"*", "all1", nil},
				{"Staff", "staff1", nil},
				{"Class", "class1", nil},
				{"*", "all2", nil},
				{"Staff", "staff2", nil},
			},
			entityType: "Staff",
			wantLog:    []string{"staff1:e1", "staff2:e1", "all1:e1", "all2:e1"},
		},
		{
			name: "unknown type runs only all handlers",
			regs: []reg{
				{"Staff", "staff1", nil},
				{"*", "all1", nil},
				{"*", "all2", nil},
			},
			entityType: "Invoice",
			wantLog:    []string{"all1:e1", "all2:e1"},
		},
		{
			name:       "no handlers at all",
			entityType: "Staff",
		},
		{
			name: "entity type match is exact",
			regs: []reg{
				{"staff", "lower", nil},
				{"Staff", "exact", nil},
			},
			entityType: "Staff",
			wantLog:    []string{"exact:e1"},
		},
		{
			name: "first type handler error stops the rest",
			regs: []reg{
				{"Staff", "staff1", boom},
				{"Staff", "staff2", nil},
				{"*", "all1", nil},
			},
			entityType: "Staff",
			wantLog:    []string{"staff1:e1"},
			wantErr:    boom,
		},
		{
			name: "all handler error stops later all handlers",
			regs: []reg{
				{"Staff", "staff1", nil},
				{"*", "all1", boom},
				{"*", "all2", nil},
			},
			entityType: "Staff",
			wantLog:    []string{"staff1:e1", "all1:e1"},
			wantErr:    boom,
		},
		{
			name: "first of two errors is returned",
			regs: []reg{
				{"Staff", "staff1", boom},
				{"*", "all1", errors.New("later")},
			},
			entityType: "Staff",
			wantLog:    []string{"staff1:e1"},
			wantErr:    boom,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			r := events.NewRouter()
			for _, g := range tt.regs {
				if g.entityType == "*" {
					r.RegisterAll(rec.handler(g.name, g.err))
				} else {
					r.Register(g.entityType, rec.handler(g.name, g.err))
				}
			}
			err := r.Dispatch(context.Background(), events.Event{ID: "e1", EntityType: tt.entityType})
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("Dispatch error = %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(rec.log, tt.wantLog) {
				t.Errorf("handlers ran %q, want %q", rec.log, tt.wantLog)
			}
		})
	}
}

// TestRouterDispatchRepeatable checks that dispatching does not change the registrations
// (the per-call handler list must not alias the router's slices).
func TestRouterDispatchRepeatable(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	r := events.NewRouter()
	r.Register("Staff", rec.handler("s1", nil))
	r.RegisterAll(rec.handler("a1", nil))
	for i := range 3 {
		if err := r.Dispatch(context.Background(), events.Event{ID: fmt.Sprint(i), EntityType: "Staff"}); err != nil {
			t.Fatalf("Dispatch: %v", err)
		}
	}
	r.Register("Staff", rec.handler("s2", nil))
	if err := r.Dispatch(context.Background(), events.Event{ID: "x", EntityType: "Staff"}); err != nil {
		t.Fatalf("Dispatch: %v", err)
	}
	want := []string{"s1:0", "a1:0", "s1:1", "a1:1", "s1:2", "a1:2", "s1:x", "s2:x", "a1:x"}
	if !reflect.DeepEqual(rec.log, want) {
		t.Errorf("handlers ran %q, want %q", rec.log, want)
	}
}

func FuzzParse(f *testing.F) {
	seeds := []map[string]any{
		validEvent(),
		with(func(m map[string]any) { m["revision"] = "12" }),
		with(func(m map[string]any) { m["type"] = "x.deleted"; m["data"] = nil }),
		with(func(m map[string]any) { delete(m, "id") }),
		with(func(m map[string]any) { m["data"] = []any{1} }),
		with(func(m map[string]any) { delete(m, "data"); m["data_base64"] = "e30=" }),
	}
	for _, s := range seeds {
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"specversion":"1.0","id":"a","source":"b","type":"c","businessunitid":"d","entitytype":"e","entityguid":"f","revision":1,"data":{}}`))
	f.Add([]byte(`{"revision":99999999999999999999}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := events.Parse(raw)
		if err != nil {
			if !automation.IsInvalid(err) {
				t.Fatalf("Parse error %v has code %s, want %s", err, automation.CodeOf(err), automation.CodeInvalidInput)
			}
			return
		}
		if ev.ID == "" || ev.Source == "" || ev.Type == "" || ev.EntityType == "" || ev.EntityGuid == "" || ev.BusinessUnitID == "" {
			t.Fatalf("Parse succeeded with an empty required field: %+v", ev)
		}
		if ev.Data == nil {
			t.Fatalf("Parse succeeded with nil Data: %+v", ev)
		}
		if ev.Revision < 0 {
			t.Fatalf("Parse succeeded with negative revision %d", ev.Revision)
		}
		if !json.Valid([]byte(ev.DataJSON)) || !strings.HasPrefix(ev.DataJSON, "{") {
			t.Fatalf("DataJSON %q is not a JSON object", ev.DataJSON)
		}
		if ev.Deleted != strings.HasSuffix(ev.Type, ".deleted") {
			t.Fatalf("Deleted = %v for type %q", ev.Deleted, ev.Type)
		}
	})
}

func TestAttributeNamesAndDeletedSuffix(t *testing.T) {
	t.Parallel()
	base := `{"specversion":"1.0","id":"e","source":"/s","type":"T.Deleted","businessunitid":"b","entitytype":"T","entityguid":"g","revision":1%s}`
	ev, err := events.Parse([]byte(strings.Replace(base, "%s", "", 1)))
	if err != nil || !ev.Deleted {
		t.Fatalf("a type ending .Deleted (any case) is a deletion: %+v %v", ev, err)
	}
	for extra, field := range map[string]string{
		`,"BusinessUnitID":"x"`:       "BusinessUnitID",
		`,"my-ext":"x"`:               "my-ext",
		`,"averyveryverylongname1":1`: "averyveryverylongname1",
		`,"ext":{"a":1}`:              "ext",
		`,"subject":5`:                "subject",
	} {
		_, err := events.Parse([]byte(strings.Replace(base, "%s", extra, 1)))
		if !automation.IsInvalid(err) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: err = %v", extra, err)
		}
	}
}

// A datacontenttype is JSON by its media type, not by a prefix: "application/jsonx" and
// "application/json-patch" are not application/json, while parameters are allowed (RFC 9110
// section 8.3.1). Letter case is refused: the CloudEvents SDK reads data by the exact type.
func TestDataContentTypeIsAMediaType(t *testing.T) {
	t.Parallel()
	for ct, ok := range map[string]bool{
		"application/json":                true,
		"application/json; charset=utf-8": true,
		"Application/JSON":                false,
		"application/jsonx":               false,
		"application/json-patch+json":     false, // +json, but data is an object, not a patch
		"application/json;;":              false,
		"text/json":                       false,
		"application/cloudevents+jsonfoo": false,
	} {
		_, err := events.Parse(encode(t, with(func(m map[string]any) { m["datacontenttype"] = ct })))
		if (err == nil) != ok {
			t.Errorf("datacontenttype %q: err %v, want accepted %v", ct, err, ok)
		}
	}
}

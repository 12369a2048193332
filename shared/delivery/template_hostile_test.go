package delivery_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

func render(t *testing.T, tpl store.NotificationTemplate, payload string) (delivery.Content, error) {
	t.Helper()
	c, err := delivery.Compile(tpl)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	data, err := delivery.RenderData(delivery.Message{DeliveryKey: "dlv_x", PayloadJSON: payload})
	if err != nil {
		t.Fatal(err)
	}
	return c.Render(data)
}

// A null inside a list is missing too: neither "<no value>" (text) nor a blank (HTML).
func TestTemplateNullInsideAListIsNotABlank(t *testing.T) {
	t.Parallel()
	tpl := store.NotificationTemplate{Key: "k", Subject: "s",
		Text: "{{range .source.items}}[{{.name}}]{{end}}", HTML: "{{range .source.items}}<b>{{.name}}</b>{{end}}"}
	_, err := render(t, tpl, `{"source":{"items":[{"name":"Amelia"},{"name":null}]}}`)
	var re *delivery.RenderError
	if !errors.As(err, &re) || re.Field != "name" {
		t.Fatalf("null field in a list element: %v", err)
	}
	// A null element of a list is absent, never printed as "<no value>".
	out, err := render(t, store.NotificationTemplate{Key: "k", Subject: "s", Text: "{{range .source.names}}[{{.}}]{{end}}"},
		`{"source":{"names":["Amelia",null,"Liam"]}}`)
	if err != nil || out.Text != "[Amelia][Liam]" {
		t.Fatalf("null list element: %q %v", out.Text, err)
	}
}

// Rendering is bounded: a part whose output outgrows delivery.MaxRenderedBytes is a render
// error (not gigabytes in memory), and the constructs that can loop without bound or
// without output - a range over a number, recursive or exponential {{template}} calls - are
// rejected when the template is saved.
func TestTemplateRenderIsBounded(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 64<<10)
	items := strings.TrimSuffix(strings.Repeat(`"`+big+`",`, 40), ",")
	_, err := render(t, store.NotificationTemplate{Key: "k", Subject: "s", Text: "{{range .source.items}}{{.}}{{.}}{{end}}"},
		`{"source":{"items":[`+items+`]}}`)
	var re *delivery.RenderError
	if !errors.As(err, &re) || re.Part != delivery.PartText || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("5 MiB of text: %v", err)
	}
	for name, body := range map[string]string{
		"range over a literal":           "{{range 1000000000}}x{{end}}",
		"range over a declared literal":  "{{range $i := 1000000000}}{{end}}",
		"range over a variable":          "{{$n := 1000000000}}{{range $n}}{{end}}",
		"range over a parenthesised one": "{{range (1000000000)}}{{end}}",
		"range over a chained variable":  "{{$a := 1000000000}}{{$b := $a}}{{range $b}}{{end}}",
		"range over a reassigned one":    "{{$n := .source}}{{$n = 1000000000}}{{range $n}}{{end}}",
		"range over len":                 "{{range len .source.name}}{{end}}",
		"nested":                         "{{if .a}}{{with .b}}{{range 99999999}}{{end}}{{end}}{{end}}",
		"define":                         `{{define "a"}}x{{end}}y`,
		"template call":                  `{{template "text" .}}`,
		"block":                          `{{block "b" .}}x{{end}}`,
	} {
		for _, part := range []string{delivery.PartText, delivery.PartHTML, delivery.PartSubject} {
			tpl := store.NotificationTemplate{Key: "k", Subject: "s", Text: "t"}
			switch part {
			case delivery.PartText:
				tpl.Text = body
			case delivery.PartHTML:
				tpl.HTML = body
			default:
				tpl.Subject = body
			}
			_, err := delivery.Compile(tpl)
			var ae *automation.Error
			if !errors.As(err, &ae) || ae.Field != part {
				t.Errorf("%s in %s: %v", name, part, err)
			}
		}
	}
	// Ranges over the data stay allowed.
	out, err := render(t, store.NotificationTemplate{Key: "k", Subject: "{{len .source.items}} items", Text: "{{range $i, $x := .source.items}}{{$i}}={{$x}} {{end}}"},
		`{"source":{"items":["a","b"]}}`)
	if err != nil || out.Text != "0=a 1=b " || out.Subject != "2 items" {
		t.Fatalf("%+v %v", out, err)
	}
}

// html/template escapes on first use: a template it cannot escape (an attribute or a
// script left open, branches ending in different contexts) does parse, but could never
// render. It is rejected when saved, not discovered on every delivery.
func TestHTMLTemplateThatCannotBeEscapedIsRejectedAtSave(t *testing.T) {
	t.Parallel()
	ts := newEnv(t, nil).tpl
	for _, html := range []string{`<a href="{{.x}}`, `<script>var a = {{.x}}`, `{{if .a}}<a href="{{else}}<p>{{end}}`} {
		_, err := ts.Save(context.Background(), store.NotificationTemplate{Key: "k", Subject: "s", HTML: html, CreatedBy: "ops"}, nil)
		var ae *automation.Error
		if !errors.As(err, &ae) || ae.Field != delivery.PartHTML {
			t.Errorf("%q: %v", html, err)
		}
	}
	if _, err := ts.Get(context.Background(), "k", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a template that cannot be escaped was stored: %v", err)
	}
	// Escapable ones still render, escaped for their context.
	out, err := render(t, store.NotificationTemplate{Key: "k", Subject: "s", HTML: `<a href="{{.source.url}}">{{.source.name}}</a>`},
		`{"source":{"url":"javascript:alert(1)","name":"<b>x</b>"}}`)
	if err != nil || out.HTML != `<a href="#ZgotmplZ">&lt;b&gt;x&lt;/b&gt;</a>` {
		t.Fatalf("%q %v", out.HTML, err)
	}
}

// Save refuses what its columns cannot hold (SQL Server would fail the insert with a
// truncation error, a 500): a business unit id over 100 characters, a CreatedBy over 200.
func TestTemplateSaveBoundsItsIdentifiers(t *testing.T) {
	t.Parallel()
	ts := newEnv(t, nil).tpl
	ctx := context.Background()
	for field, tpl := range map[string]store.NotificationTemplate{
		"businessUnitId": {Key: "k", BusinessUnitID: strings.Repeat("b", 101), Subject: "s", Text: "t", CreatedBy: "ops"},
		"createdBy":      {Key: "k", Subject: "s", Text: "t", CreatedBy: strings.Repeat("o", 201)},
	} {
		_, err := ts.Save(ctx, tpl, nil)
		var ae *automation.Error
		if !errors.As(err, &ae) || ae.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := ts.Save(ctx, store.NotificationTemplate{Key: "k", BusinessUnitID: strings.Repeat("b", 100), Subject: "s", Text: "t",
		CreatedBy: strings.Repeat("ô", 200)}, nil); err != nil {
		t.Fatal(err)
	}
}

package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// A page's JSON is the lists' shape byte for byte: items never null, nextCursor only when
// a next position exists, and that cursor decodes back to the position for the same query
// only.
func TestNewPage(t *testing.T) {
	t.Parallel()
	type pos struct {
		After string `json:"after"`
	}
	cases := []struct {
		name  string
		items []string
		next  pos
		want  string // JSON, "" to check the cursor instead
	}{
		{"nil items, last page", nil, pos{}, `{"items":[]}`},
		{"empty items, last page", []string{}, pos{}, `{"items":[]}`},
		{"items, last page", []string{"a", "b"}, pos{}, `{"items":["a","b"]}`},
		{"items, more pages", []string{"a"}, pos{After: "a"}, ""},
	}
	for _, tc := range cases {
		p, err := httpapi.NewPage(tc.items, "q=1", tc.next)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if tc.want != "" {
			if string(b) != tc.want {
				t.Errorf("%s: %s, want %s", tc.name, b, tc.want)
			}
			continue
		}
		if p.NextCursor == "" {
			t.Fatalf("%s: no nextCursor for position %+v", tc.name, tc.next)
		}
		if want := `{"items":["a"],"nextCursor":"` + p.NextCursor + `"}`; string(b) != want {
			t.Errorf("%s: %s, want %s", tc.name, b, want)
		}
		var got pos
		if err := httpapi.DecodeCursor(p.NextCursor, "q=1", &got); err != nil || got != tc.next {
			t.Errorf("%s: cursor decodes to %+v, %v; want %+v", tc.name, got, err, tc.next)
		}
		if err := httpapi.DecodeCursor(p.NextCursor, "q=2", &got); err == nil {
			t.Errorf("%s: the cursor was accepted for another query", tc.name)
		}
	}
	if b, _ := json.Marshal(httpapi.PageOf[string](nil)); string(b) != `{"items":[]}` {
		t.Errorf("PageOf(nil) = %s, want {\"items\":[]}", b)
	}
	// Positions of other kinds: an int64 (deliveries, runs) is the last page at 0.
	if p, err := httpapi.NewPage([]int{1}, "n", int64(0)); err != nil || p.NextCursor != "" {
		t.Errorf("int64 zero position: %+v, %v; want no cursor", p, err)
	}
	if p, err := httpapi.NewPage([]int{1}, "n", int64(7)); err != nil || p.NextCursor == "" {
		t.Errorf("int64 position 7: %+v, %v; want a cursor", p, err)
	}
}

// PageAfter keeps limit items of a limit+1 read, sets the cursor after the last kept item
// only when the look-ahead row came back, and stops at an item error.
func TestPageAfter(t *testing.T) {
	pos := func(n int) int64 { return int64(n) }
	item := func(n int) (string, error) { return strconv.Itoa(n), nil }
	p, err := httpapi.PageAfter([]int{10, 20, 30}, 2, "q", pos, item)
	if err != nil || len(p.Items) != 2 || p.Items[1] != "20" || p.NextCursor == "" {
		t.Fatalf("look-ahead read: %+v, %v", p, err)
	}
	var after int64
	if err := httpapi.DecodeCursor(p.NextCursor, "q", &after); err != nil || after != 20 {
		t.Fatalf("cursor decodes to %d, %v; want 20", after, err)
	}
	if p, err := httpapi.PageAfter([]int{10, 20}, 2, "q", pos, item); err != nil || len(p.Items) != 2 || p.NextCursor != "" {
		t.Fatalf("last page: %+v, %v", p, err)
	}
	if p, err := httpapi.PageAfter(nil, 2, "q", pos, item); err != nil || p.Items == nil || len(p.Items) != 0 {
		t.Fatalf("empty: %+v, %v", p, err)
	}
	bad := errors.New("bad row")
	if _, err := httpapi.PageAfter([]int{1}, 2, "q", pos, func(int) (string, error) { return "", bad }); !errors.Is(err, bad) {
		t.Fatalf("item error: %v", err)
	}
}

// ReadPage reads from where the cursor left off (the zero position without one) with one row
// more than the page, pages the rows as PageAfter does, and reads nothing when the cursor
// does not decode for its query (400 naming cursor) or read fails.
func TestReadPage(t *testing.T) {
	rows := []int{10, 20, 30, 40, 50}
	var reads []string
	read := func(after int64, n int) ([]int, error) {
		reads = append(reads, strconv.FormatInt(after, 10)+"+"+strconv.Itoa(n))
		var out []int
		for _, r := range rows {
			if int64(r) > after && len(out) < n {
				out = append(out, r)
			}
		}
		return out, nil
	}
	pos := func(n int) int64 { return int64(n) }
	item := func(n int) (string, error) { return strconv.Itoa(n), nil }
	in := func(cursor string) *httpapi.In[struct{}] {
		v := url.Values{}
		if cursor != "" {
			v.Set("cursor", cursor)
		}
		return &httpapi.In[struct{}]{Query: httpapi.NewQuery(v), Limit: 2}
	}
	p, err := httpapi.ReadPage(in(""), "q", read, pos, item)
	if err != nil || len(p.Items) != 2 || p.Items[1] != "20" || p.NextCursor == "" {
		t.Fatalf("first page: %+v, %v", p, err)
	}
	if p, err = httpapi.ReadPage(in(p.NextCursor), "q", read, pos, item); err != nil || len(p.Items) != 2 || p.Items[0] != "30" || p.NextCursor == "" {
		t.Fatalf("second page: %+v, %v", p, err)
	}
	if p, err = httpapi.ReadPage(in(p.NextCursor), "q", read, pos, item); err != nil || len(p.Items) != 1 || p.Items[0] != "50" || p.NextCursor != "" {
		t.Fatalf("last page: %+v, %v", p, err)
	}
	if got := strings.Join(reads, " "); got != "0+3 20+3 40+3" {
		t.Fatalf("reads %s, want 0+3 20+3 40+3 (after the cursor, one row more than the page)", got)
	}
	first, _ := httpapi.ReadPage(in(""), "q", read, pos, item)
	reads = nil
	var ae *automation.Error
	if _, err := httpapi.ReadPage(in(first.NextCursor), "other", read, pos, item); !errors.As(err, &ae) || ae.Field != "cursor" || reads != nil {
		t.Fatalf("a cursor of another query: %v, reads %v", err, reads)
	}
	bad := errors.New("store down")
	if _, err := httpapi.ReadPage(in(""), "q", func(int64, int) ([]int, error) { return nil, bad }, pos, item); !errors.Is(err, bad) {
		t.Fatalf("read error: %v", err)
	}
}

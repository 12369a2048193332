package reminder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
	"unicode/utf16"

	"github.com/automation-platform/automation/shared/strictjson"
)

// HTTPSourceLister reads sources from the domain app's list endpoint, so reconciliation can
// repair what a dropped event never told us (docs/architecture.md#reconciliation, docs/architecture.md#inputs "an HTTP source loader may be
// configured per source type"). The request is
//
//	GET {URL}?businessUnitId=…&sourceType=…&limit=…[&changedSince=RFC3339][&cursor=…]
//	          [&activeOnly=true&dueFrom=YYYY-MM-DD&dueTo=YYYY-MM-DD]
//
// and the answer 200 with
//
//	{"items":[{"entityGuid":"…","revision":7,"changedOn":"2026-09-02T01:00:00Z",
//	           "deleted":false,"data":{…}}], "nextCursor":"…"}
//
// items ordered by (changedOn, entityGuid), at most limit of them; nextCursor (at most
// MaxSourceCursorChars) continues after the last item. Anything else is an error and the
// sweep's position does not move.
type HTTPSourceLister struct {
	URL string
	// Client defaults to one with a 30 s timeout.
	Client *http.Client
	// BearerToken, when set, is sent as Authorization: Bearer <token>.
	BearerToken string
	// MaxBodyBytes bounds an answer (default 8 MiB).
	MaxBodyBytes int64
}

var entityGuidRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,200}$`)

// MaxSourceCursorChars bounds a domain app's nextCursor (UTF-16 code units): the sweep stores
// it as its position (ReconciliationState.CursorPosition, nvarchar(1000)).
const MaxSourceCursorChars = 1000

// ListSources implements SourceLister.
func (l HTTPSourceLister) ListSources(ctx context.Context, q SourceQuery) (SourcePage, error) {
	u, err := url.Parse(l.URL)
	if err != nil {
		return SourcePage{}, fmt.Errorf("source lister URL: %w", err)
	}
	v := u.Query()
	v.Set("businessUnitId", q.BusinessUnitID)
	v.Set("sourceType", q.SourceType)
	v.Set("limit", strconv.Itoa(q.Limit))
	if !q.ChangedSince.IsZero() {
		v.Set("changedSince", q.ChangedSince.UTC().Format(time.RFC3339Nano))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if q.ActiveOnly {
		v.Set("activeOnly", "true")
	}
	if !q.DueFrom.IsZero() {
		v.Set("dueFrom", q.DueFrom.String())
		v.Set("dueTo", q.DueTo.String())
	}
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return SourcePage{}, err
	}
	req.Header.Set("Accept", "application/json")
	if l.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+l.BearerToken)
	}
	client := l.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return SourcePage{}, fmt.Errorf("source lister %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	max := l.MaxBodyBytes
	if max <= 0 {
		max = 8 << 20
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return SourcePage{}, fmt.Errorf("source lister: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return SourcePage{}, fmt.Errorf("source lister: %s answered %d", u.Redacted(), resp.StatusCode)
	}
	if int64(len(body)) > max {
		return SourcePage{}, fmt.Errorf("source lister: answer larger than %d bytes", max)
	}
	var wire struct {
		Items []struct {
			EntityGuid string          `json:"entityGuid"`
			Revision   *int64          `json:"revision"`
			ChangedOn  *time.Time      `json:"changedOn"`
			Deleted    bool            `json:"deleted"`
			Data       json.RawMessage `json:"data"`
		} `json:"items"`
		NextCursor string `json:"nextCursor"`
	}
	if err := strictjson.Decode(body, &wire); err != nil {
		return SourcePage{}, fmt.Errorf("source lister: answer is not a source page: %w", err)
	}
	if len(wire.Items) > q.Limit {
		return SourcePage{}, fmt.Errorf("source lister: %d items for a limit of %d", len(wire.Items), q.Limit)
	}
	page := SourcePage{Cursor: wire.NextCursor}
	for i, it := range wire.Items {
		switch {
		case !entityGuidRE.MatchString(it.EntityGuid):
			return SourcePage{}, fmt.Errorf("source lister: items[%d].entityGuid %q is not a token", i, it.EntityGuid)
		case it.Revision == nil || *it.Revision < 0:
			return SourcePage{}, fmt.Errorf("source lister: items[%d].revision must be a non-negative integer", i)
		case it.ChangedOn == nil:
			return SourcePage{}, fmt.Errorf("source lister: items[%d].changedOn is required", i)
		}
		data := bytes.TrimSpace(it.Data)
		if len(data) == 0 || string(data) == "null" {
			if !it.Deleted {
				return SourcePage{}, fmt.Errorf("source lister: items[%d].data is required unless deleted", i)
			}
			data = []byte("{}")
		}
		if data[0] != '{' {
			return SourcePage{}, fmt.Errorf("source lister: items[%d].data must be a JSON object", i)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			return SourcePage{}, fmt.Errorf("source lister: items[%d].data: %w", i, err)
		}
		page.Items = append(page.Items, ListedSource{EntityGuid: it.EntityGuid, Revision: *it.Revision, Deleted: it.Deleted,
			DataJSON: compact.String(), ChangedOn: it.ChangedOn.UTC()})
	}
	if len(page.Items) > 0 && page.Cursor == "" {
		return SourcePage{}, fmt.Errorf("source lister: nextCursor is required when items are returned")
	}
	if n := len(utf16.Encode([]rune(page.Cursor))); n > MaxSourceCursorChars {
		return SourcePage{}, fmt.Errorf("source lister: nextCursor has %d characters, more than the %d a sweep position may hold", n, MaxSourceCursorChars)
	}
	return page, nil
}

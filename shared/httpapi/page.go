package httpapi

// Page is the one list answer of the HTTP APIs (docs/api-conventions.md): a page of items
// and, unless it is the last page, the opaque cursor of the next one:
//
//	{"items":[…],"nextCursor":"…"}
//
// Items is never null: an empty page is "items":[]. NextCursor is omitted on the last page.
type Page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// NewPage returns the page of items whose next page starts after position next: its
// NextCursor is EncodeCursor(query, next), bound to query (the list's filters in canonical
// form, as DecodeCursor expects them), and absent when next is the zero P (the last page).
// A nil items becomes an empty page. Errors: EncodeCursor's (next is not JSON-encodable).
func NewPage[T any, P comparable](items []T, query string, next P) (Page[T], error) {
	p := PageOf(items)
	var zero P
	if next == zero {
		return p, nil
	}
	c, err := EncodeCursor(query, next)
	if err != nil {
		return Page[T]{}, err
	}
	p.NextCursor = c
	return p, nil
}

// ReadPage is a list route's page read by cursor, in one call: the position pos where the
// caller's ?cursor= left off (In.After, bound to query; the zero P without a cursor), the
// rows after it read with one row more than the page size (read(after, in.Limit+1)), and
// their page (PageAfter). read runs only when the cursor decodes. Errors: In.After's (400
// naming cursor), read's, then PageAfter's.
func ReadPage[Req, R, T any, P comparable](in *In[Req], query string, read func(after P, n int) ([]R, error), pos func(R) P, item func(R) (T, error)) (Page[T], error) {
	var after P
	if err := in.After(query, &after); err != nil {
		return Page[T]{}, err
	}
	rows, err := read(after, in.Limit+1)
	if err != nil {
		return Page[T]{}, err
	}
	return PageAfter(rows, in.Limit, query, pos, item)
}

// PageOf returns a list that fits in one page (no NextCursor); a nil items becomes an
// empty page.
func PageOf[T any](items []T) Page[T] {
	if items == nil {
		items = []T{}
	}
	return Page[T]{Items: items}
}

// PageAfter makes the page of a list read with one row more than limit (the look-ahead row
// that says another page exists): at most limit items, each made by item from its row, and,
// when the look-ahead row was read, the cursor after the last item's position pos(row),
// bound to query as in NewPage. Errors: item's first error, or NewPage's.
func PageAfter[R, T any, P comparable](rows []R, limit int, query string, pos func(R) P, item func(R) (T, error)) (Page[T], error) {
	var next P
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
		next = pos(rows[limit-1])
	}
	items := make([]T, 0, len(rows))
	for _, r := range rows {
		it, err := item(r)
		if err != nil {
			return Page[T]{}, err
		}
		items = append(items, it)
	}
	return NewPage(items, query, next)
}

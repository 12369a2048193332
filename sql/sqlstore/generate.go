package sqlstore

import (
	"bytes"
	"fmt"
	"text/template"
)

// ExpandQueries expands a query template (queries/<name>.sql.tmpl, Go text/template) into
// query blocks ("-- name: X :kind" …), for query families that differ only in a few parts:
// the support finders repeat one column list and one block of optional filters in each of
// their permutations (one per driving index), so the template holds those once and each
// permutation names only its own parts. LoadQueries calls it for every *.sql.tmpl file it
// embeds, when the store starts: the expanded text is never committed, so there is no
// second copy to drift from the template. name is the template's file name, used in errors.
//
// Functions the template may call: dict "k1" v1 "k2" v2 … (a map, to pass several named
// values to a {{template}}). Errors: the template does not parse or does not execute (a
// dict with an odd number of arguments or a non-string key), naming the file.
func ExpandQueries(name string, tmpl []byte) ([]byte, error) {
	t, err := template.New(name).Funcs(template.FuncMap{"dict": dict}).Parse(string(tmpl))
	if err != nil {
		return nil, fmt.Errorf("sqlstore: template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, nil); err != nil {
		return nil, fmt.Errorf("sqlstore: template %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// dict builds a map from alternating keys (strings) and values.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict: %d arguments, want key value pairs", len(kv))
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

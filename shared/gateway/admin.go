package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/strictjson"
)

// Admin manages the registry (docs/gateway.md#the-registry): every save is a new version
// naming its operator, checked by Checker first; the Cache is invalidated so this process
// routes with the new version at once (others within Cache.Interval).
type Admin struct {
	Store   store.GatewayStore
	Checker Checker
	Cache   *Cache
	Clock   automation.Clock
}

// SaveParams saves a definition of EventType: ExpectedVersion 0 creates it, else it is the
// version read (If-Match).
type SaveParams struct {
	EventType       string
	ExpectedVersion int64
	Definition      []byte
	Operator        string
}

// Save checks and stores a new version. Errors: automation.Invalid naming the JSON Pointer
// of a bad member (422); an operator missing (400); the body's eventType differing from
// EventType (422 at /eventType); store.ErrConflict (exists), store.ErrNotFound (unknown
// type), store.ErrLeaseLost (ExpectedVersion is not the latest: 412).
func (a *Admin) Save(ctx context.Context, p SaveParams) (store.EventRegistryEntry, error) {
	if p.Operator == "" {
		return store.EventRegistryEntry{}, &automation.Error{Code: automation.CodeMalformed, Field: "X-Automation-Operator",
			Message: "a registry change names its operator"}
	}
	c, err := a.Checker.CheckDefinition(p.Definition)
	if err != nil {
		return store.EventRegistryEntry{}, asInvalid(err)
	}
	if c.EventType != p.EventType {
		return store.EventRegistryEntry{}, automation.Invalid("/eventType", "is %q, but the definition is saved as %q", c.EventType, p.EventType)
	}
	e, err := a.Store.EventRegistrySave(ctx, store.EventRegistrySaveParams{EventType: p.EventType, ExpectedVersion: p.ExpectedVersion,
		DefinitionJSON: string(c.Raw), Operator: p.Operator, Now: a.Clock.Now().UTC()})
	if errors.Is(err, store.ErrLeaseLost) {
		// 412 with the version in force, so the caller knows what to read (issue 33, item 10).
		if vs, verr := a.Store.EventRegistryListVersions(ctx, p.EventType); verr == nil && len(vs) > 0 {
			cur := vs[len(vs)-1].Version
			return e, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
				Message: fmt.Sprintf("%s is at version \"%d\", not \"%d\"; read it again", p.EventType, cur, p.ExpectedVersion)}
		}
	}
	if err != nil {
		return e, err
	}
	if a.Cache != nil {
		a.Cache.Invalidate()
	}
	return e, nil
}

func asInvalid(err error) error {
	var r *Refusal
	if errors.As(err, &r) {
		return r.AsAutomation()
	}
	return err
}

// ImportResult says what an import did per event type.
type ImportResult struct {
	EventType string `json:"eventType"`
	Version   int64  `json:"version"`
	Changed   bool   `json:"changed"` // false: the latest version already had this definition
}

// Import saves every definition of doc whose content differs from its type's latest
// version (a new version, by operator); the others are left alone, so importing the same
// file twice changes nothing. All definitions are checked before anything is saved: one bad
// definition refuses the file (automation.Invalid at /events/{i}{pointer}).
func (a *Admin) Import(ctx context.Context, doc Document, operator string) ([]ImportResult, error) {
	if operator == "" {
		return nil, &automation.Error{Code: automation.CodeMalformed, Field: "X-Automation-Operator", Message: "a registry change names its operator"}
	}
	checked := make([]*Compiled, len(doc.Events))
	seen := map[string]bool{}
	for i, raw := range doc.Events {
		c, err := a.Checker.CheckDefinition(raw)
		if err != nil {
			var r *Refusal
			if errors.As(err, &r) {
				return nil, automation.Invalid(fmt.Sprintf("/events/%d%s", i, r.Pointer), "%s", r.Reason)
			}
			return nil, err
		}
		if seen[c.EventType] {
			return nil, automation.Invalid(fmt.Sprintf("/events/%d/eventType", i), "%q is defined twice in the file", c.EventType)
		}
		seen[c.EventType] = true
		checked[i] = c
	}
	var out []ImportResult
	for _, c := range checked {
		cur, err := a.Store.EventRegistryGet(ctx, store.EventRegistryGetParams{EventType: c.EventType})
		switch {
		case err == nil && bytes.Equal([]byte(cur.DefinitionJSON), c.Raw):
			out = append(out, ImportResult{EventType: c.EventType, Version: cur.Version})
			continue
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return out, err
		}
		e, err := a.Store.EventRegistrySave(ctx, store.EventRegistrySaveParams{EventType: c.EventType, ExpectedVersion: cur.Version,
			DefinitionJSON: string(c.Raw), Operator: operator, Now: a.Clock.Now().UTC()})
		if err != nil {
			return out, err
		}
		out = append(out, ImportResult{EventType: c.EventType, Version: e.Version, Changed: true})
	}
	if a.Cache != nil {
		a.Cache.Invalidate()
	}
	return out, nil
}

// Export returns the latest version of every event type as one Document.
func (a *Admin) Export(ctx context.Context) (Document, error) {
	entries, err := a.Store.EventRegistryListLatest(ctx)
	if err != nil {
		return Document{}, err
	}
	doc := Document{Events: make([]json.RawMessage, 0, len(entries))}
	for _, e := range entries {
		doc.Events = append(doc.Events, json.RawMessage(e.DefinitionJSON))
	}
	return doc, nil
}

// ParseDocument reads an import file strictly ({"events":[definition, …]}).
func ParseDocument(raw []byte) (Document, error) {
	var doc Document
	switch err := strictjson.Decode(raw, &doc); {
	case errors.Is(err, strictjson.ErrTrailing):
		return doc, automation.Invalid("/", "trailing data after the registry file")
	case err != nil:
		return doc, automation.Invalid("/", "not a registry file ({\"events\":[…]}): %v", err)
	}
	return doc, nil
}

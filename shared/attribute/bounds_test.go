package attribute_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Every identifier at its bound is accepted and one byte more is refused, naming the
// member; a cap's budget is bounded so that its code (CapPrefix + budget) fits the
// attribute code column.
func TestPayloadBoundsAreTheColumns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	capped := func(budget string) string {
		return `{"attribute_code":"points","entity_type":"CUSTOMER","operation":"INCREMENT","step":"1",
 "thresholds":[{"value":1,"trigger_event":"T","cap":{"budget":"` + budget + `","limit":"10","cost":"1"}}]}`
	}
	code := func(c string) string {
		return `{"attribute_code":"` + c + `","entity_type":"CUSTOMER","operation":"INCREMENT","step":"1"}`
	}
	entity := func(id, typ string) string {
		return `{"target_entity_id":"` + id + `","attribute_code":"c","entity_type":"` + typ + `","operation":"INCREMENT","step":"1"}`
	}
	at := "2026-07-09T10:00:00Z"
	ok := [][]byte{
		payload(strings.Repeat("e", attribute.MaxEventIDLen), "bu-syd", at, code("c")),
		payload("ok-code", "bu-syd", at, code(strings.Repeat("c", attribute.MaxAttributeCodeLen))),
		payload("ok-entity", "bu-syd", at, entity(strings.Repeat("i", attribute.MaxEntityIDLen), strings.Repeat("T", attribute.MaxEntityTypeLen))),
		payload("ok-cap", "bu-syd", at, capped(strings.Repeat("b", attribute.MaxAttributeCodeLen-len(attribute.CapPrefix)))),
	}
	for i, b := range ok {
		if _, err := e.svc.Handle(context.Background(), b); err != nil {
			t.Errorf("at the bound %d: %v", i, err)
		}
	}
	refused := map[string][]byte{
		"event_id":                                 payload(strings.Repeat("e", attribute.MaxEventIDLen+1), "bu-syd", at, code("c")),
		"instructions[0].attribute_code":           payload("x1", "bu-syd", at, code(strings.Repeat("c", attribute.MaxAttributeCodeLen+1))),
		"instructions[0].target_entity_id":         payload("x2", "bu-syd", at, entity(strings.Repeat("i", attribute.MaxEntityIDLen+1), "T")),
		"instructions[0].entity_type":              payload("x3", "bu-syd", at, entity("i", strings.Repeat("T", attribute.MaxEntityTypeLen+1))),
		"instructions[0].thresholds[0].cap.budget": payload("x4", "bu-syd", at, capped(strings.Repeat("b", attribute.MaxAttributeCodeLen-len(attribute.CapPrefix)+1))),
	}
	for member, b := range refused {
		_, err := e.svc.Handle(context.Background(), b)
		var ae *automation.Error
		if !automation.IsInvalid(err) || !errors.As(err, &ae) || ae.Field != member {
			t.Errorf("%s one byte over its bound: %v, want InvalidInput naming it", member, err)
		}
	}
}

// tooLargeStore answers AttributeApply as sql/sqlstore does when SQL Server refuses a key
// past its limit (error 1946): store.ErrValueTooLarge marked permanent.
type tooLargeStore struct{ attribute.Store }

func (tooLargeStore) AttributeApply(context.Context, store.AttributeApplyParams) (store.AttributeApplyOutcome, error) {
	return "", automation.Permanent(fmt.Errorf("%w: %w", store.ErrValueTooLarge,
		errors.New("mssql AttributeInsert: mssql: Operation failed. The index entry of length 1100 bytes for the index 'PK_AttributeValue' exceeds the maximum length of 900 bytes for clustered indexes.")))
}

// A value the database refuses as too large is a refusal of the event (OnRefused; the
// tracking handler dead-letters it with this reason), not a transient error to redeliver.
func TestValueTooLargeIsRefusedNotRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var refused error
	svc := &attribute.Service{Store: tooLargeStore{e.st}, Clock: e.clock, OnRefused: func(_ string, err error) { refused = err }}
	_, err := svc.Handle(context.Background(), payload("big-1", "bu-syd", "2026-07-09T10:00:00Z",
		`{"attribute_code":"c","entity_type":"CUSTOMER","operation":"INCREMENT","step":"1"}`))
	if !automation.IsInvalid(err) || !automation.IsPermanent(err) || !errors.Is(err, store.ErrValueTooLarge) {
		t.Fatalf("Handle: %v (invalid %v, permanent %v), want a permanent InvalidInput", err, automation.IsInvalid(err), automation.IsPermanent(err))
	}
	if refused == nil || !strings.Contains(refused.Error(), "PK_AttributeValue") {
		t.Errorf("OnRefused got %v, want the database's reason", refused)
	}
}

package replay

import (
	"time"

	"github.com/automation-platform/automation/shared/attribute"
)

// Attribute engine output (docs/attributes.md#replay). A tracking message the relay published
// is applied by TrackingProcessor through the Functions router, like any bus message:
//
//	{"kind":"trigger","at":…,"eventId":"attr-gen-…","eventName":"View_10_Items_Reward",
//	 "sourceEventId":"view-10","entityType":"CUSTOMER","entityId":"CUST-002",
//	 "attribute":"weekly_view_count","threshold":"10"}
//	    one per trigger event written to the outbox (then a "routed" line on topic events)
//	{"kind":"attribute","at":…,"eventId":"view-10","entityType":"CUSTOMER","entityId":"CUST-002",
//	 "attribute":"weekly_view_count","type":"number","value":"0","period":"W2026-07-06"}
//	    one per value an event wrote, when the scenario sets "printAttributes": true (a hot
//	    counter's line has "hot": true and the increment as value); a tracking message refused
//	    with a permanent error is then a "rejected" line with its event id and the index of
//	    the ingest input that brought it.

// AttributeLine is one attribute value a tracking message wrote.
type AttributeLine struct {
	Kind       string `json:"kind"` // "attribute"
	At         string `json:"at"`
	EventID    string `json:"eventId"`
	EntityType string `json:"entityType"`
	EntityID   string `json:"entityId"`
	Attribute  string `json:"attribute"`
	Type       string `json:"type"`
	Value      string `json:"value"`
	Period     string `json:"period,omitempty"`
	Hot        bool   `json:"hot,omitempty"`
}

// TriggerLine is one trigger event the attribute engine emitted.
type TriggerLine struct {
	Kind          string `json:"kind"` // "trigger"
	At            string `json:"at"`
	EventID       string `json:"eventId"`
	EventName     string `json:"eventName"`
	SourceEventID string `json:"sourceEventId"`
	EntityType    string `json:"entityType"`
	EntityID      string `json:"entityId"`
	Attribute     string `json:"attribute"`
	Threshold     string `json:"threshold"`
}

// attributes writes the lines of one applied tracking message (app.Options.OnAttributes).
func (r *runner) attributes(res attribute.Result) {
	at := r.clock.Now().UTC().Format(time.RFC3339)
	if r.sc.PrintAttributes {
		for _, c := range res.Changes {
			r.emit(AttributeLine{Kind: "attribute", At: at, EventID: res.EventID, EntityType: c.EntityType, EntityID: c.EntityID,
				Attribute: c.Code, Type: c.Type, Value: c.Value, Period: c.Period, Hot: c.Hot})
		}
	}
	for _, t := range res.Triggers {
		r.triggers++
		r.emit(TriggerLine{Kind: "trigger", At: at, EventID: t.EventID, EventName: t.EventName, SourceEventID: t.Metadata.OriginalTriggerEventID,
			EntityType: t.Metadata.EntityType, EntityID: t.Metadata.EntityID, Attribute: t.Metadata.TriggerAttribute, Threshold: string(t.Metadata.ThresholdReached)})
	}
}

// attributeRefused writes a "rejected" line for a tracking message refused with a permanent
// error (app.Options.OnAttributeRefused), when the scenario prints attributes.
func (r *runner) attributeRefused(eventID string, err error) {
	if !r.sc.PrintAttributes {
		return
	}
	r.rejected++
	r.emit(RejectedLine{Kind: "rejected", At: r.clock.Now().UTC().Format(time.RFC3339), Input: r.eventInput[eventID], EventID: eventID, Error: err.Error()})
}

func (r *runner) emit(v any) {
	if err := r.enc.Encode(v); err != nil && r.err == nil {
		r.err = err
	}
}

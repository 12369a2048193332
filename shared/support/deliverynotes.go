package support

import (
	"context"
	"fmt"
	"strings"

	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/store"
)

// maxDeliveryNoteRows bounds the completed rows one explanation reads deliveries for, and
// maxDeliveryNotesPerRow the deliveries read per row.
const (
	maxDeliveryNoteRows    = 20
	maxDeliveryNotesPerRow = 20
)

// quietHoursPrefix starts the LastError of a delivery waiting for quiet hours
// (preference.WaitReason).
const quietHoursPrefix = "waiting for quiet hours to end at "

// DeliveryNote is what happened to one delivery of a completed row when it was not simply
// sent: skipped by a recipient's preference, or waiting for quiet hours to end
// (docs/channels.md#recipient-preferences). Recipient is masked.
type DeliveryNote struct {
	DeliveryKey string `json:"deliveryKey"`
	Channel     string `json:"channel"`
	Recipient   string `json:"recipient"`
	Status      string `json:"status"`
	Note        string `json:"note"`
}

// deliveryNote returns j's note, or false when there is nothing to say.
func deliveryNote(j store.NotificationJob) (DeliveryNote, bool) {
	n := DeliveryNote{DeliveryKey: j.DeliveryKey, Channel: j.Channel, Recipient: logmask.String(j.Recipient), Status: string(j.Status)}
	switch {
	case j.Status == store.NotificationSkipped:
		n.Note = "Skipped: " + j.LastError
	case j.Status == store.NotificationQueued && strings.HasPrefix(j.LastError, quietHoursPrefix):
		n.Note = strings.ToUpper(j.LastError[:1]) + j.LastError[1:]
	default:
		return DeliveryNote{}, false
	}
	return n, true
}

// addDeliveryNotes reads the deliveries of the explanation's completed rows (bounded) and
// adds a note, and a sentence of its explanation, for each delivery that was skipped or
// waits for quiet hours.
func (s *Service) addDeliveryNotes(ctx context.Context, x *Explanation) error {
	read := 0
	visit := func(o *Occurrence) error {
		if o.Row == nil || o.Outcome != "Sent" || read >= maxDeliveryNoteRows {
			return nil
		}
		read++
		jobs, err := s.store.SupportNotificationList(ctx, o.SchedulerKey, maxDeliveryNotesPerRow)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if n, ok := deliveryNote(j); ok {
				o.Deliveries = append(o.Deliveries, n)
				o.Explanation += fmt.Sprintf(" The %s delivery to %s: %s.", n.Channel, n.Recipient, strings.TrimSuffix(n.Note, "."))
			}
		}
		return nil
	}
	for i := range x.Settings {
		for j := range x.Settings[i].Occurrences {
			if err := visit(&x.Settings[i].Occurrences[j]); err != nil {
				return err
			}
		}
	}
	for i := range x.OtherRows {
		if err := visit(&x.OtherRows[i]); err != nil {
			return err
		}
	}
	return nil
}

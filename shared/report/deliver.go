package report

// This file is the report package's only coupling to the delivery stage (docs/architecture.md#delivery): it turns a
// rendered run into delivery requests through the public delivery API (delivery.Build: one
// NotificationJob + one outbox message per recipient and channel, written with the row's
// completion in one transaction; the dispatcher sends each behind its send claim). When the
// delivery stage changes (templates per business unit, more channels), only this file follows.

import (
	"encoding/json"
	"fmt"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// Payload is the render data of one report delivery (small: the file itself stays in Blob).
// ScheduledOn and LocalTime have the same names as the reminder payload's.
type Payload struct {
	SubscriptionGuid string       `json:"subscriptionGuid"`
	SubscriptionName string       `json:"subscriptionName"`
	ReportType       string       `json:"reportType"`
	RunKeyHash       string       `json:"runKeyHash"`
	PeriodStartUTC   string       `json:"periodStartUtc"`
	PeriodEndUTC     string       `json:"periodEndUtc"`
	ScheduledOn      string       `json:"scheduledOn"` // RFC 3339 UTC
	LocalTime        string       `json:"localTime"`   // RFC 3339 with the business unit's offset
	TimeZoneID       string       `json:"timeZoneId"`
	Format           string       `json:"format"`
	Delivery         DeliveryMode `json:"delivery"`
	// Link is the API path that serves the file (delivery "link").
	Link string `json:"link,omitempty"`
	// Attachment names the blob a channel attaches (delivery "attachment").
	Attachment *Attachment `json:"attachment,omitempty"`
}

// Attachment describes the stored file of a run.
type Attachment struct {
	BlobName    string `json:"blobName"`
	FileName    string `json:"fileName"`
	ContentType string `json:"contentType"`
	SizeBytes   int    `json:"sizeBytes"`
	SHA256      string `json:"sha256"`
}

// Coordinates are where a run's delivery artifacts are (ReportRunOwnership.CoordinatesJson
// and the row's DispatchResultJson): the file and every delivery request as it was built.
// A retry rebuilds exactly these requests, so it can only ever re-create the same delivery
// keys (docs/architecture.md#report-subscriptions: retries reuse ownership and coordinates).
type Coordinates struct {
	RunKeyHash   string              `json:"runKeyHash"`
	SchedulerKey string              `json:"schedulerKey"`
	File         Attachment          `json:"file"`
	DeliveryKeys []string            `json:"deliveryKeys"`
	Queue        string              `json:"queue"`
	Requests     []CoordinateRequest `json:"requests"`
}

// CoordinateRequest is one delivery request as stored in the coordinates.
type CoordinateRequest struct {
	SchedulerKey   string          `json:"schedulerKey"`
	BusinessUnitID string          `json:"businessUnitId"`
	Channel        string          `json:"channel"`
	Recipient      string          `json:"recipient"`
	Template       string          `json:"template"`
	Payload        json.RawMessage `json:"payload"`
	LocalDate      string          `json:"localDate,omitempty"` // the business unit's day of the run
}

// buildDeliveries makes one request per channel × recipient for the run keyed by
// deliveryKeyBase (the SchedulerKey the delivery keys derive from) and returns the
// coordinates to record before the rows are written.
func buildDeliveries(deliveryKeyBase, businessUnitID, template string, channels, recipients []string, p Payload, file Attachment) (Coordinates, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return Coordinates{}, err
	}
	c := Coordinates{RunKeyHash: p.RunKeyHash, SchedulerKey: deliveryKeyBase, File: file, Queue: topology.NotificationDispatchQueue}
	for _, ch := range channels {
		for _, r := range recipients {
			c.Requests = append(c.Requests, CoordinateRequest{SchedulerKey: deliveryKeyBase, BusinessUnitID: businessUnitID,
				Channel: ch, Recipient: r, Template: template, Payload: raw, LocalDate: localDate(p.LocalTime)})
		}
	}
	jobs, _, err := c.rows()
	if err != nil {
		return Coordinates{}, err
	}
	for _, j := range jobs {
		c.DeliveryKeys = append(c.DeliveryKeys, j.DeliveryKey)
	}
	return c, nil
}

// rows turns the coordinates into the NotificationJob rows and outbox messages written with
// the completion (delivery.Build; duplicate channel/recipient pairs collapse).
func (c Coordinates) rows() ([]store.NotificationRequest, []store.OutboxMessage, error) {
	reqs := make([]delivery.Request, len(c.Requests))
	for i, r := range c.Requests {
		reqs[i] = delivery.Request{SchedulerKey: r.SchedulerKey, BusinessUnitID: r.BusinessUnitID, Channel: r.Channel,
			Recipient: r.Recipient, Template: r.Template, Payload: r.Payload, LocalDate: r.LocalDate}
	}
	jobs, msgs, err := delivery.Build(reqs)
	if err != nil {
		return nil, nil, fmt.Errorf("report deliveries: %w", err)
	}
	return jobs, msgs, nil
}

// localDate is the "YYYY-MM-DD" of an RFC 3339 local time ("" when it is not one).
func localDate(localTime string) string {
	if len(localTime) < 10 {
		return ""
	}
	return localTime[:10]
}

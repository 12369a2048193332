package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
)

const codesError = codes.Error

// The product's own span attributes (docs/operations.md#spans). Ids are span attributes,
// never metric labels. TestOperationsDocListsEverySpanAttributeAndLogField checks that the
// documentation names each.
const (
	SchedulerKey   = attribute.Key("automation.scheduler_key")
	EventID        = attribute.Key("automation.event_id")
	EventType      = attribute.Key("automation.event_type")
	BusinessUnitID = attribute.Key("automation.business_unit_id")
	CommandID      = attribute.Key("automation.command_id")
	ExecutionID    = attribute.Key("automation.execution_id")
	CampaignID     = attribute.Key("automation.campaign_id")
	ActionKey      = attribute.Key("automation.action_key")
	Provider       = attribute.Key("automation.provider")
	DeliveryKey    = attribute.Key("automation.delivery_key")
	Channel        = attribute.Key("automation.channel")
	Status         = attribute.Key("automation.status")
	OutboxID       = attribute.Key("automation.outbox_id")
	ErrorCode      = attribute.Key("automation.error_code")
	Count          = attribute.Key("automation.count")
	FunctionName   = attribute.Key("faas.name")
)

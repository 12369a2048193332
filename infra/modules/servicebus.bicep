// Service Bus namespace and entities used by the pipeline.
//
// Standard tier: duplicate detection, sessions and topics are not available on Basic.
// Local (SAS key) authentication is disabled; the Functions host and the Go azservicebus
// client both connect with the managed identity.
//
// requiresDuplicateDetection and requiresSession can only be chosen when an entity is
// created; changing them later means deleting and recreating the entity.

@description('Namespace name (6-50 characters, letters, digits and hyphens, globally unique).')
@minLength(6)
@maxLength(50)
param name string

@description('Azure region.')
param location string

@description('Tags applied to the namespace.')
param tags object = {}

@description('Topic carrying domain events into the pipeline.')
param domainEventsTopicName string = 'domain-events'

@description('Session-enabled subscription of the pipeline on the domain events topic (DomainEventHandler).')
param automationSubscriptionName string = 'automation'

@description('Topic carrying delivery facts (one message per status change of a delivery command) to reporting.')
param deliveryFactsTopicName string = 'delivery-facts'

@description('Subscription of the reporting projection (DeliveryFactProjection) on the delivery facts topic.')
param reportingSubscriptionName string = 'reporting'

@description('Event gateway topic for direct events (the rule/points engine).')
param eventsTopicName string = 'events'

@description('Subscription of the rule/points engine on the events topic.')
param rulesSubscriptionName string = 'rules'

@description('Event gateway topic for counter events with their instructions (the attribute engine).')
param trackingTopicName string = 'tracking'

@description('Subscription of the attribute engine on the tracking topic.')
param attributesSubscriptionName string = 'attributes'

@description('Event gateway topic for notification events (our delivery stage).')
param notiTopicName string = 'noti'

@description('Session-enabled subscription of the delivery stage (NotiDelivery) on the noti topic.')
param deliverySubscriptionName string = 'delivery'

@description('Session-enabled subscription of the campaign dispatcher (CampaignDispatch) on the events topic.')
param campaignsSubscriptionName string = 'campaigns'

@description('Topic carrying campaign facts (CampaignActionOutcomeEvent, one message per status change of a campaign command).')
param campaignFactsTopicName string = 'campaign-facts'

@description('Topic carrying campaign fee facts (CampaignFeeEvent, one message per status change of a fee transfer; CampaignFeeProjection).')
param campaignFeeFactsTopicName string = 'campaign-fee-facts'

@description('Queues: due-work (DueWorkExecutor fan-out), notification-dispatch (NotificationDispatch), campaign-commands (CampaignWorker) and campaign-results (CampaignResults).')
param queueNames array = [
  'due-work'
  'notification-dispatch'
  'campaign-commands'
  'campaign-results'
]

@description('Duplicate detection window (ISO 8601 duration).')
param duplicateDetectionWindow string = 'PT10M'

@description('Deliveries before a message is dead-lettered.')
param maxDeliveryCount int = 10

@description('Peek-lock duration (ISO 8601, at most PT5M).')
param lockDuration string = 'PT5M'

// Schema: https://learn.microsoft.com/azure/templates/microsoft.servicebus/namespaces
resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
  }
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.servicebus/namespaces/topics
resource domainEvents 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: namespace
  name: domainEventsTopicName
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: duplicateDetectionWindow
  }
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.servicebus/namespaces/topics/subscriptions
// Sessions give per-entity ordering (SessionId set by the publisher); the trigger's
// function.json must set "isSessionsEnabled": true.
resource automationSubscription 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = {
  parent: domainEvents
  name: automationSubscriptionName
  properties: {
    requiresSession: true
    maxDeliveryCount: maxDeliveryCount
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    deadLetteringOnFilterEvaluationExceptions: true
  }
}

// Facts are published through the outbox with MessageId = eventId; duplicate detection drops a
// relay's re-publication, and the projection ignores any other duplicate by revision.
resource deliveryFacts 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: namespace
  name: deliveryFactsTopicName
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: duplicateDetectionWindow
  }
}

resource reportingSubscription 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = {
  parent: deliveryFacts
  name: reportingSubscriptionName
  properties: {
    maxDeliveryCount: maxDeliveryCount
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    deadLetteringOnFilterEvaluationExceptions: true
  }
}

// Event gateway topics (docs/gateway.md#routing): the outbox publishes with MessageId
// "{eventId}:{route}" (duplicate detection drops a relay's re-publication) and SessionId the
// customer or entity id, so every subscription is session-enabled (one customer's events in order).
var gatewayTopics = [
  { topic: eventsTopicName, subscription: rulesSubscriptionName }
  { topic: trackingTopicName, subscription: attributesSubscriptionName }
  { topic: notiTopicName, subscription: deliverySubscriptionName }
]

resource gatewayTopic 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = [
  for t in gatewayTopics: {
    parent: namespace
    name: t.topic
    properties: {
      requiresDuplicateDetection: true
      duplicateDetectionHistoryTimeWindow: duplicateDetectionWindow
    }
  }
]

resource gatewaySubscription 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = [
  for (t, i) in gatewayTopics: {
    parent: gatewayTopic[i]
    name: t.subscription
    properties: {
      requiresSession: true
      maxDeliveryCount: maxDeliveryCount
      lockDuration: lockDuration
      deadLetteringOnMessageExpiration: true
      deadLetteringOnFilterEvaluationExceptions: true
    }
  }
]

// Campaigns (docs/campaigns.md): the dispatcher's own session-enabled subscription on the
// events topic (the DIRECT route), and the facts topic with the reporting projection's
// subscription (MessageId = the fact's eventId; the projection ignores duplicates by revision).
resource campaignsSubscription 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = {
  parent: gatewayTopic[0]
  name: campaignsSubscriptionName
  properties: {
    requiresSession: true
    maxDeliveryCount: maxDeliveryCount
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    deadLetteringOnFilterEvaluationExceptions: true
  }
}

resource campaignFacts 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: namespace
  name: campaignFactsTopicName
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: duplicateDetectionWindow
  }
}

resource campaignReportingSubscription 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = {
  parent: campaignFacts
  name: reportingSubscriptionName
  properties: {
    maxDeliveryCount: maxDeliveryCount
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    deadLetteringOnFilterEvaluationExceptions: true
  }
}

// Budgets (docs/budgets.md): fee facts to the fee projection (CampaignFeeProjection).
resource campaignFeeFacts 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: namespace
  name: campaignFeeFactsTopicName
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: duplicateDetectionWindow
  }
}

resource campaignFeeReportingSubscription 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = {
  parent: campaignFeeFacts
  name: reportingSubscriptionName
  properties: {
    maxDeliveryCount: maxDeliveryCount
    lockDuration: lockDuration
    deadLetteringOnMessageExpiration: true
    deadLetteringOnFilterEvaluationExceptions: true
  }
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.servicebus/namespaces/queues
resource queues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = [
  for queueName in queueNames: {
    parent: namespace
    name: queueName
    properties: {
      requiresDuplicateDetection: true
      duplicateDetectionHistoryTimeWindow: duplicateDetectionWindow
      maxDeliveryCount: maxDeliveryCount
      lockDuration: lockDuration
      deadLetteringOnMessageExpiration: true
    }
  }
]

output name string = namespace.name
output id string = namespace.id
// Public Azure host suffix. A sovereign cloud uses a different suffix (e.g.
// servicebus.chinacloudapi.cn); adjust here if deploying there.
output fullyQualifiedNamespace string = '${namespace.name}.servicebus.windows.net'

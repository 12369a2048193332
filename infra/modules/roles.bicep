// Least-privilege Azure RBAC for the function app's user-assigned identity.
//
// Role definition ids are the built-in role GUIDs listed in "Azure built-in roles"
// (https://learn.microsoft.com/azure/role-based-access-control/built-in-roles).
// Assignment names are deterministic guid()s of scope + principal + role, so redeploying
// is idempotent.
//
// Not granted on purpose:
//   * Storage Queue Data Contributor: the host only needs queues for blob triggers (blob
//     receipts/poison queue), Durable Functions or queue triggers/bindings. This app uses
//     timer, HTTP and Service Bus triggers only; timer singletons are blob leases (Storage
//     Blob Data Owner covers them). Add it if a storage-queue or blob trigger is ever added.
//   * Azure Service Bus Data Owner: Sender + Receiver cover trigger, settlement and SDK sends
//     (including scheduled messages); the app never manages entities.
//   * Azure SQL: not an ARM role; see infra/README.md (CREATE USER ... FROM EXTERNAL PROVIDER).

@description('Principal (object) id of the function app managed identity.')
param principalId string

@description('Storage account holding host storage, deployment package and trace data.')
param storageAccountName string

@description('Deployment package container (scope of the optional deployer role).')
param deploymentContainerName string

@description('Service Bus namespace name.')
param serviceBusNamespaceName string

@description('Application Insights component name.')
param applicationInsightsName string

@description('Optional: object id of the person or CI principal that uploads the Elastic Premium package blob. Empty: no assignment.')
param deployerPrincipalId string = ''

@description('Principal type of deployerPrincipalId.')
@allowed([
  'User'
  'Group'
  'ServicePrincipal'
])
param deployerPrincipalType string = 'User'

var roleIds = {
  // Full blob data access incl. container creation: host coordination (timer leases, key
  // store), Flex deployment container, diagnostics blobs.
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  // AutomationJob trace rows; also the host's diagnostic-events table.
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  // Deployer only: upload the package blob.
  storageBlobDataContributor: 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  // Entra-authenticated Application Insights ingestion.
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' existing = {
  parent: storage
  name: 'default'
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' existing = {
  parent: blobService
  name: deploymentContainerName
}

resource serviceBus 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusNamespaceName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.authorization/roleassignments
resource blobOwner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, principalId, roleIds.storageBlobDataOwner)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.storageBlobDataOwner)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

resource tableContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, principalId, roleIds.storageTableDataContributor)
  scope: storage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.storageTableDataContributor)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// Namespace scope: covers the topic subscription (a topic-only scope would not, see the
// Service Bus extension permissions in the Azure Functions docs) and both queues.
resource sbSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(serviceBus.id, principalId, roleIds.serviceBusDataSender)
  scope: serviceBus
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataSender)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

resource sbReceiver 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(serviceBus.id, principalId, roleIds.serviceBusDataReceiver)
  scope: serviceBus
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataReceiver)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

resource metricsPublisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, principalId, roleIds.monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.monitoringMetricsPublisher)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// Scoped to the package container only. Flex deployments do not need it (one deploy writes
// the package with the app's identity); Elastic Premium uploads the package blob directly.
resource deployerBlobContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(deployerPrincipalId)) {
  name: guid(deploymentContainer.id, deployerPrincipalId, roleIds.storageBlobDataContributor)
  scope: deploymentContainer
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.storageBlobDataContributor)
    principalId: deployerPrincipalId
    principalType: deployerPrincipalType
  }
}

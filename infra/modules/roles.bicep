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
//   * Azure SQL: not an ARM role; see infra/README.md (CREATE USER ... FROM EXTERNAL PROVIDER).
//
// Granted conditionally: Key Vault Secrets User on keyVaultName (Key Vault references);
// Azure Service Bus Data Owner for the scaler (grantServiceBusDataOwner, default true; see
// below); Azure Service Bus Data Sender for operatorPrincipalId (the smoke check's publish);
// Storage Blob Data Contributor on the package container for deployerPrincipalId.

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

@description('Key Vault (this resource group, Azure RBAC permission model) whose secrets the app settings reference. Empty: no Key Vault role.')
param keyVaultName string = ''

@description('Assign Azure Service Bus Data Owner to the identity at the namespace: the scaler reads entity message counts through the data-plane Manage right, which only Data Owner carries. False: the scaler falls back to peeking (docs/deploy.md, step 8).')
param grantServiceBusDataOwner bool = true

@description('Optional: object id of the person or CI principal that runs the smoke checks; gets Azure Service Bus Data Sender at the namespace so `automation publish` can send one event. Empty: no assignment.')
param operatorPrincipalId string = ''

@description('Principal type of operatorPrincipalId.')
@allowed([
  'User'
  'Group'
  'ServicePrincipal'
])
param operatorPrincipalType string = 'User'


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
  // Data-plane Manage (and Send, Listen): the scaler's runtime-properties read.
  serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'
  // Entra-authenticated Application Insights ingestion.
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
  // Read secret contents: Key Vault references in app settings (webhookSecret, smtpPassword).
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
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

// Only referenced by the conditional assignment below (no request is made for an existing
// resource whose properties are not read).
resource keyVault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: empty(keyVaultName) ? 'unused' : keyVaultName
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

// Schema: https://learn.microsoft.com/azure/templates/microsoft.keyvault/vaults (existing)
// Key Vault Secrets User at the vault: the platform resolves "@Microsoft.KeyVault(...)" app
// settings with the identity named by the site's keyVaultReferenceIdentity (functionapp.bicep).
resource keyVaultSecretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(keyVaultName)) {
  name: guid(keyVault.id, principalId, roleIds.keyVaultSecretsUser)
  scope: keyVault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.keyVaultSecretsUser)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// The Service Bus scaler (target-based scaling, and the scale controller on Flex) reads each
// triggering entity's runtime properties (active message count) with the app's identity
// through the Service Bus administration API, which needs the data-plane Manage right
// ("Manage claim"). Only Azure Service Bus Data Owner carries it; control-plane read actions
// (Microsoft.ServiceBus/namespaces/*/read) do not, so a custom reader role cannot do this
// job. Without it the extension catches the UnauthorizedAccessException and falls back to
// peeking the first message (a count of at most one, from its enqueued time): scale-out then
// follows queue age, not backlog. Data Owner also lets the app create, change and delete
// entities; that is the price of backlog-driven scaling (docs/deploy.md, step 8).
resource sbDataOwner 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (grantServiceBusDataOwner) {
  name: guid(serviceBus.id, principalId, roleIds.serviceBusDataOwner)
  scope: serviceBus
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataOwner)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// The operator who runs the runbook's Service Bus smoke check (docs/deploy.md, step 7.3)
// publishes one event with `automation publish` under their own Entra identity.
resource operatorSbSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(serviceBus.id, operatorPrincipalId, roleIds.serviceBusDataSender)
  scope: serviceBus
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataSender)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
}

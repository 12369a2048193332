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
//
// Granted conditionally: Key Vault Secrets User on keyVaultName (Key Vault references), and
// the custom Service Bus scale-reader role (grantServiceBusScaleReader).

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

@description('Create the custom Service Bus scale-reader role and assign it to the identity.')
param grantServiceBusScaleReader bool = true

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
  // Read secret contents: Key Vault references in app settings (webhookSecret, smtpPassword).
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
}

// Least-privilege custom role for the Service Bus scaler. Target-based scaling reads each
// triggering entity's runtime properties (active message count) with the app's identity;
// Azure Service Bus Data Receiver carries data actions only (receive), no read of entities.
// This role reads the namespace, its queues, topics and subscriptions and nothing else (no
// write, no listKeys, no data actions). The alternative, Azure Service Bus Data Owner, would
// also let the app create, change and delete entities. See infra/README.md, "Scaling
// permissions", for what to check after the first deploy and the fallback.
var serviceBusScaleReaderActions = [
  'Microsoft.ServiceBus/namespaces/read'
  'Microsoft.ServiceBus/namespaces/queues/read'
  'Microsoft.ServiceBus/namespaces/topics/read'
  'Microsoft.ServiceBus/namespaces/topics/subscriptions/read'
]

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

// Schema: https://learn.microsoft.com/azure/templates/microsoft.authorization/roledefinitions
// A custom role's name must be unique in the tenant: the resource group id is part of it.
// assignableScopes is the resource group (custom roles are assignable at management group,
// subscription or resource group); the assignment below narrows it to the namespace.
resource serviceBusScaleReader 'Microsoft.Authorization/roleDefinitions@2022-04-01' = if (grantServiceBusScaleReader) {
  name: guid(resourceGroup().id, 'automation-servicebus-scale-reader')
  properties: {
    roleName: 'Automation Service Bus scale reader (${uniqueString(resourceGroup().id)})'
    description: 'Read Service Bus namespaces, queues, topics and subscriptions (entity runtime properties for trigger scaling). No write, no keys, no data actions.'
    type: 'CustomRole'
    permissions: [
      {
        actions: serviceBusScaleReaderActions
        notActions: []
        dataActions: []
        notDataActions: []
      }
    ]
    assignableScopes: [
      resourceGroup().id
    ]
  }
}

resource sbScaleReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (grantServiceBusScaleReader) {
  name: guid(serviceBus.id, principalId, 'automation-servicebus-scale-reader')
  scope: serviceBus
  properties: {
    roleDefinitionId: serviceBusScaleReader.id
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

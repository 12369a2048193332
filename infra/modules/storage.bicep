// Storage account shared by the Functions host (AzureWebJobsStorage, identity-based), the
// Flex Consumption deployment package container, and the app's own trace storage
// (Table "AutomationJob", blob container "diagnostics").
//
// Shared-key access is disabled: every client (host, deployment, Go SDK clients) uses
// Microsoft Entra ID. That rules out the Azure Files content share an Elastic Premium app
// would normally use (WEBSITE_CONTENTAZUREFILECONNECTIONSTRING needs a key); the Elastic
// Premium path therefore runs from a package blob instead (see functionapp.bicep).

@description('Storage account name (3-24 lowercase letters and digits, globally unique).')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region.')
param location string

@description('Tags applied to the account.')
param tags object = {}

@description('Blob container holding the deployment package (Flex Consumption deployment storage; Elastic Premium run-from-package blob).')
param deploymentContainerName string = 'app-package'

@description('Blob container for diagnostics blobs written by the app.')
param diagnosticsContainerName string = 'diagnostics'

@description('Table holding the AutomationJob trace rows.')
param traceTableName string = 'AutomationJob'

@description('Storage redundancy.')
@allowed([
  'Standard_LRS'
  'Standard_ZRS'
  'Standard_GRS'
  'Standard_RAGRS'
])
param skuName string = 'Standard_LRS'

// Schema: https://learn.microsoft.com/azure/templates/microsoft.storage/storageaccounts
resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: skuName
  }
  properties: {
    accessTier: 'Hot'
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      bypass: 'AzureServices'
      defaultAction: 'Allow'
    }
  }
}

// Containers and tables are created through the management plane, which works with
// shared-key access disabled.
resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobService
  name: deploymentContainerName
  properties: {
    publicAccess: 'None'
  }
}

resource diagnosticsContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobService
  name: diagnosticsContainerName
  properties: {
    publicAccess: 'None'
  }
}

resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource traceTable 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = {
  parent: tableService
  name: traceTableName
}

// primaryEndpoints end with '/'; the *Url outputs drop it (the Go clients take the service
// URL, e.g. https://<account>.table.core.windows.net).
var blobEndpoint = account.properties.primaryEndpoints.blob
var tableEndpoint = account.properties.primaryEndpoints.table

output name string = account.name
output id string = account.id
@description('Blob endpoint with its trailing slash.')
output blobEndpoint string = blobEndpoint
@description('Blob service URL without trailing slash.')
output blobUrl string = endsWith(blobEndpoint, '/') ? take(blobEndpoint, length(blobEndpoint) - 1) : blobEndpoint
@description('Table service URL without trailing slash.')
output tableUrl string = endsWith(tableEndpoint, '/') ? take(tableEndpoint, length(tableEndpoint) - 1) : tableEndpoint
output deploymentContainerName string = deploymentContainer.name
output diagnosticsContainerName string = diagnosticsContainer.name
output traceTableName string = traceTable.name

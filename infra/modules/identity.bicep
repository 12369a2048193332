// User-assigned managed identity of the function app. Every data-plane connection the app
// makes (host storage, Flex deployment container, Service Bus triggers and SDK sends,
// Table/Blob trace storage, Azure SQL, Application Insights ingestion) authenticates as
// this one identity; roles.bicep grants it what it needs.

@description('Name of the user-assigned managed identity.')
param name string

@description('Azure region.')
param location string

@description('Tags applied to the identity.')
param tags object = {}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.managedidentity/userassignedidentities
resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output name string = identity.name
output clientId string = identity.properties.clientId
output principalId string = identity.properties.principalId

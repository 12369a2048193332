// Log Analytics workspace and a workspace-based Application Insights component.
// Local (instrumentation-key) ingestion is disabled by default: the Functions host sends
// telemetry with Entra ID using APPLICATIONINSIGHTS_AUTHENTICATION_STRING, which needs the
// Monitoring Metrics Publisher role (roles.bicep).

@description('Name of the Log Analytics workspace.')
param logAnalyticsName string

@description('Name of the Application Insights component.')
param applicationInsightsName string

@description('Azure region.')
param location string

@description('Tags applied to both resources.')
param tags object = {}

@description('Log retention in days.')
@minValue(30)
@maxValue(730)
param retentionInDays int = 30

@description('When true, Application Insights accepts only Microsoft Entra authenticated telemetry.')
param disableLocalAuth bool = true

// Schema: https://learn.microsoft.com/azure/templates/microsoft.operationalinsights/workspaces
resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
  }
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.insights/components
resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    DisableLocalAuth: disableLocalAuth
  }
}

output workspaceId string = workspace.id
output applicationInsightsName string = appInsights.name
output applicationInsightsId string = appInsights.id
output applicationInsightsConnectionString string = appInsights.properties.ConnectionString

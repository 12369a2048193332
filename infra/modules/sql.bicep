// Azure SQL logical server with Microsoft Entra-only authentication (no SQL logins, no
// passwords anywhere) and the automation database.
//
// The function app's managed identity cannot be made a database user from Bicep: that
// takes CREATE USER ... FROM EXTERNAL PROVIDER inside the database (infra/README.md).

@description('Logical server name (lowercase letters, digits and hyphens, globally unique).')
@minLength(1)
@maxLength(63)
param serverName string

@description('Database name.')
param databaseName string

@description('Azure region.')
param location string

@description('Tags applied to server and database.')
param tags object = {}

@description('Display name of the Microsoft Entra admin (user, group or application) of the server.')
param entraAdminLogin string

@description('Object id of the Microsoft Entra admin.')
param entraAdminObjectId string

@description('Kind of principal the Entra admin is.')
@allowed([
  'User'
  'Group'
  'Application'
])
param entraAdminPrincipalType string = 'Group'

@description('Database SKU: GP_S_Gen5 (General Purpose serverless, auto-pause) or Basic (5 DTU).')
@allowed([
  'GP_S_Gen5'
  'Basic'
])
param databaseSkuName string = 'GP_S_Gen5'

@description('Serverless only: maximum vCores.')
param serverlessMaxVCores int = 2

@description('Serverless only: minimum vCores, as a decimal string (e.g. 0.5).')
param serverlessMinVCores string = '0.5'

@description('Serverless only: minutes of inactivity before auto-pause (-1 disables auto-pause).')
param serverlessAutoPauseDelayMinutes int = 60

@description('Backup storage redundancy.')
@allowed([
  'Local'
  'Zone'
  'Geo'
  'GeoZone'
])
param backupStorageRedundancy string = 'Local'

@description('Optional client IPv4 address (operator or CI) allowed through the firewall, e.g. to run the migrate command. Empty: no rule.')
param clientIpAddress string = ''

var isServerless = databaseSkuName == 'GP_S_Gen5'

var serverlessSku = {
  name: 'GP_S_Gen5'
  tier: 'GeneralPurpose'
  family: 'Gen5'
  capacity: serverlessMaxVCores
}

var basicSku = {
  name: 'Basic'
  tier: 'Basic'
  capacity: 5
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.sql/servers
// administrators can set the Entra admin and Entra-only authentication at creation, which is
// what allows creating the server without administratorLogin/administratorLoginPassword.
// Known issue: redeploying a server that has Entra-only authentication has been reported to
// fail with AadOnlyAuthenticationIsEnabled / "Invalid value given for parameter ..."
// (Azure/bicep#6858, Azure/bicep-types-az#1436 and #2320; later reports say it now works).
// If it happens, drop azureADOnlyAuthentication from this block and manage it with a
// Microsoft.Sql/servers/azureADOnlyAuthentications child named 'Default'.
resource server 'Microsoft.Sql/servers@2023-08-01' = {
  name: serverName
  location: location
  tags: tags
  properties: {
    version: '12.0'
    minimalTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
    administrators: {
      administratorType: 'ActiveDirectory'
      azureADOnlyAuthentication: true
      login: entraAdminLogin
      sid: entraAdminObjectId
      principalType: entraAdminPrincipalType
      tenantId: tenant().tenantId
    }
  }
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.sql/servers/firewallrules
// 0.0.0.0-0.0.0.0 is the documented special rule "Allow Azure services and resources to
// access this server" (the function app has no fixed outbound IP on Flex Consumption).
resource allowAzure 'Microsoft.Sql/servers/firewallRules@2023-08-01' = {
  parent: server
  name: 'AllowAllWindowsAzureIps'
  properties: {
    startIpAddress: '0.0.0.0'
    endIpAddress: '0.0.0.0'
  }
}

resource allowClient 'Microsoft.Sql/servers/firewallRules@2023-08-01' = if (!empty(clientIpAddress)) {
  parent: server
  name: 'AllowOperatorClient'
  properties: {
    startIpAddress: clientIpAddress
    endIpAddress: clientIpAddress
  }
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.sql/servers/databases
resource database 'Microsoft.Sql/servers/databases@2023-08-01' = {
  parent: server
  name: databaseName
  location: location
  tags: tags
  sku: isServerless ? serverlessSku : basicSku
  properties: {
    collation: 'SQL_Latin1_General_CP1_CI_AS'
    requestedBackupStorageRedundancy: backupStorageRedundancy
    zoneRedundant: false
    // minCapacity is a decimal; Bicep has no decimal literal, hence json().
    autoPauseDelay: isServerless ? serverlessAutoPauseDelayMinutes : null
    minCapacity: isServerless ? json(serverlessMinVCores) : null
  }
}

output serverName string = server.name
output fullyQualifiedDomainName string = server.properties.fullyQualifiedDomainName
output databaseName string = database.name

// Azure runtime of the automation pipeline: Go custom handler on Azure Functions (Flex
// Consumption by default, Elastic Premium by parameter), Azure SQL (Entra-only), Service
// Bus, Storage (host + trace), Application Insights, one user-assigned managed identity
// with least-privilege roles. Deploy into an existing resource group:
//
//   az deployment group create -g <rg> -f infra/main.bicep -p infra/parameters/dev.bicepparam
//
// See infra/README.md for the one manual T-SQL step and the code deployment.

targetScope = 'resourceGroup'

@description('Short environment name (e.g. dev, prod); part of every resource name.')
@minLength(2)
@maxLength(10)
param environmentName string

@description('Azure region for all resources. Flex Consumption is not offered in every region (az functionapp list-flexconsumption-locations).')
param location string = resourceGroup().location

@description('Function app hosting plan.')
@allowed([
  'FlexConsumption'
  'ElasticPremium'
])
param planKind string = 'FlexConsumption'

@description('Display name of the Microsoft Entra admin of the Azure SQL server (a group is recommended).')
param sqlEntraAdminLogin string

@description('Object id of that Microsoft Entra admin.')
param sqlEntraAdminObjectId string

@description('Principal type of the Microsoft Entra admin.')
@allowed([
  'User'
  'Group'
  'Application'
])
param sqlEntraAdminPrincipalType string = 'Group'

@description('Azure SQL database SKU: GP_S_Gen5 (serverless) or Basic.')
@allowed([
  'GP_S_Gen5'
  'Basic'
])
param sqlDatabaseSkuName string = 'GP_S_Gen5'

@description('Azure SQL backup storage redundancy.')
@allowed([
  'Local'
  'Zone'
  'Geo'
  'GeoZone'
])
param sqlBackupStorageRedundancy string = 'Local'

@description('Optional operator/CI IPv4 address let through the SQL firewall (to run migrate). Empty: none.')
param sqlClientIpAddress string = ''

@description('Flex Consumption: maximum instance count. 40 is the lowest maximum Flex Consumption accepts.')
@minValue(40)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Flex Consumption: instance memory size (MB).')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048

@description('Elastic Premium: SKU.')
@allowed([
  'EP1'
  'EP2'
  'EP3'
])
param elasticPremiumSku string = 'EP1'

@description('DueWorkPoller mode.')
@allowed([
  'inline'
  'fanout'
])
param dueWorkMode string = 'inline'

@description('Application log level.')
@allowed([
  'debug'
  'info'
  'warn'
  'error'
])
param logLevel string = 'info'

@description('Business units the HTTP APIs may show at most (comma-separated ids, or *).')
param apiBusinessUnits string = '*'

@description('OpenID Connect (docs/security.md#openid-connect): the token issuer (Entra ID: https://login.microsoftonline.com/<tenant id>/v2.0); empty: no OIDC tokens.')
param oidcIssuer string = ''

@description('OpenID Connect: the audience the tokens must carry (the app registration\'s client id or api://<client id>).')
param oidcAudience string = ''

@description('OpenID Connect: roles and business units per Entra ID group, the JSON text {"<group object id>": {"roles": ["operate"], "units": "bu-a"}} (docs/security.md#openid-connect). Empty: groups grant nothing.')
param oidcGroups string = ''

@description('Console sign-in with OpenID Connect (docs/console.md#sign-in): the console\'s client id; empty: bootstrap-token sign-in only.')
param oidcConsoleClientId string = ''

@description('Console sign-in: the console client\'s secret, as a Key Vault reference. Empty: a public client (PKCE alone).')
@secure()
param oidcConsoleClientSecret string = ''

@description('Reconciliation: business units whose sources are swept (comma-separated ids, or *).')
param reconcileBusinessUnits string = '*'

@description('Reconciliation: domain-app list endpoints by source type (SourceType=https://...,Other=https://...).')
param sourceUrls string = ''
param reportSources string = ''

@description('Name of a Key Vault in this resource group (Azure RBAC permission model) holding the secrets that webhookSecret/smtpPassword reference as "@Microsoft.KeyVault(SecretUri=...)"; the app identity gets Key Vault Secrets User on it. Empty: no Key Vault role (then pass no references).')
param keyVaultName string = ''

@description('Timer intervals: standard (poller 30 s, relay 10 s, reconciliation 15 min) or low (poller 5 min, relay 5 min as a safety net behind the relay run after each poll, reconciliation hourly), for low-traffic environments. See docs/deploy.md, "Cost at rest".')
@allowed([
  'standard'
  'low'
])
param trafficProfile string = 'standard'

@description('Assign Azure Service Bus Data Owner to the app identity so the scaler can read entity message counts (data-plane Manage). False: the scaler falls back to peeking the first message; see docs/deploy.md, step 8.')
param grantServiceBusDataOwner bool = true

@description('Optional object id of the person or CI principal that runs the smoke checks (gets Azure Service Bus Data Sender on the namespace, to publish one test event).')
param operatorPrincipalId string = ''

@description('Principal type of operatorPrincipalId.')
@allowed([
  'User'
  'Group'
  'ServicePrincipal'
])
param operatorPrincipalType string = 'User'

@description('HTTP APIs: the bootstrap admin credential (docs/security.md#credentials), as a Key Vault reference. Empty: function keys alone, no API keys or OIDC tokens, no console.')
@secure()
param apiToken string = ''

@description('Inbox: recipient-token secrets ("kid=secret,…") as a Key Vault reference (docs/security.md#recipient-tokens). Empty: none.')
@secure()
param recipientTokenKeys string = ''

@description('Delivery channels; secrets as Key Vault references. See infra/README.md.')
@secure()
param webhookSecret string = ''
@secure()
param webhookPreviousSecret string = ''
param webhookIdempotent string = 'false'

@description('Recipient preferences (docs/channels.md#recipient-preferences): the notification categories as JSON (empty: marketing, loyalty, service, security), the public https address of the one-click unsubscribe route, and its token signing secret (a Key Vault reference; empty: no List-Unsubscribe link).')
param notificationCategories string = ''
param unsubscribeUrl string = ''
@secure()
param unsubscribeSecret string = ''
param smtpHost string = ''
param smtpFrom string = ''
param smtpUsername string = ''
@secure()
param smtpPassword string = ''
@description('Push channel (docs/channels.md#push): the service-account key file as a Key Vault reference; empty: no push channel.')
@secure()
param fcmCredentials string = ''
param fcmProjectId string = ''
@description('SMS channel (docs/channels.md#sms): the ACS connection string as a Key Vault reference; empty: no sms channel.')
@secure()
param acsConnectionString string = ''
param smsFrom string = ''
param whatsappChannelId string = ''

@description('Channels: each delivery channel\'s provider limits (JSON object, AUTOMATION_CHANNEL_LIMITS). See docs/configuration.md#channel-limits.')
param channelLimits string = ''

@description('Campaigns: HTTP action providers (JSON array) and their bearer tokens (a Key Vault reference to a JSON object). See docs/campaigns.md#configured-providers.')
param campaignProviders string = ''
@secure()
param campaignProviderTokens string = ''
@description('Billing provider of priced campaign actions (docs/billing.md): base URL (empty: none, priced actions are refused) and bearer token as a Key Vault reference.')
param billingUrl string = ''
@secure()
param billingToken string = ''

@description('Optional object id of the person/CI principal that uploads the Elastic Premium package blob (gets Storage Blob Data Contributor on the package container only).')
param deployerPrincipalId string = ''

@description('Principal type of deployerPrincipalId.')
@allowed([
  'User'
  'Group'
  'ServicePrincipal'
])
param deployerPrincipalType string = 'User'

@description('Tags applied to every resource.')
param tags object = {}

var env = toLower(environmentName)
var token = toLower(uniqueString(subscription().id, resourceGroup().id, env))
var allTags = union(tags, {
  environment: env
  workload: 'automation'
})

var names = {
  identity: 'id-automation-${env}'
  logAnalytics: 'log-automation-${env}'
  appInsights: 'appi-automation-${env}'
  // 3-24 lowercase letters/digits.
  storage: take('stauto${replace(env, '-', '')}${token}', 24)
  serviceBus: 'sb-automation-${env}-${take(token, 6)}'
  sqlServer: 'sql-automation-${env}-${take(token, 6)}'
  sqlDatabase: 'automation'
  // The plan and the app carry the plan kind: a Flex app cannot become an Elastic Premium
  // one in place, so the fallback (docs/deploy.md, step 6) deploys a new pair beside it.
  plan: planKind == 'FlexConsumption' ? 'plan-automation-${env}' : 'plan-automation-${env}-ep'
  functionApp: planKind == 'FlexConsumption' ? 'func-automation-${env}-${take(token, 6)}' : 'func-automation-${env}-ep-${take(token, 6)}'
}

module identity 'modules/identity.bicep' = {
  name: 'identity'
  params: {
    name: names.identity
    location: location
    tags: allTags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    logAnalyticsName: names.logAnalytics
    applicationInsightsName: names.appInsights
    location: location
    tags: allTags
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: names.storage
    location: location
    tags: allTags
  }
}

module serviceBus 'modules/servicebus.bicep' = {
  name: 'servicebus'
  params: {
    name: names.serviceBus
    location: location
    tags: allTags
  }
}

module sql 'modules/sql.bicep' = {
  name: 'sql'
  params: {
    serverName: names.sqlServer
    databaseName: names.sqlDatabase
    location: location
    tags: allTags
    entraAdminLogin: sqlEntraAdminLogin
    entraAdminObjectId: sqlEntraAdminObjectId
    entraAdminPrincipalType: sqlEntraAdminPrincipalType
    databaseSkuName: sqlDatabaseSkuName
    backupStorageRedundancy: sqlBackupStorageRedundancy
    clientIpAddress: sqlClientIpAddress
  }
}

module roles 'modules/roles.bicep' = {
  name: 'roles'
  params: {
    principalId: identity.outputs.principalId
    storageAccountName: storage.outputs.name
    deploymentContainerName: storage.outputs.deploymentContainerName
    serviceBusNamespaceName: serviceBus.outputs.name
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    deployerPrincipalId: deployerPrincipalId
    deployerPrincipalType: deployerPrincipalType
    keyVaultName: keyVaultName
    grantServiceBusDataOwner: grantServiceBusDataOwner
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
  }
}

module functionApp 'modules/functionapp.bicep' = {
  name: 'functionapp'
  // The host connects with the identity as soon as it starts; create the roles first.
  dependsOn: [
    roles
  ]
  params: {
    planKind: planKind
    planName: names.plan
    appName: names.functionApp
    location: location
    tags: allTags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: storage.outputs.name
    storageBlobEndpoint: storage.outputs.blobEndpoint
    storageBlobUrl: storage.outputs.blobUrl
    storageTableUrl: storage.outputs.tableUrl
    deploymentContainerName: storage.outputs.deploymentContainerName
    serviceBusFullyQualifiedNamespace: serviceBus.outputs.fullyQualifiedNamespace
    sqlServerFqdn: sql.outputs.fullyQualifiedDomainName
    sqlDatabaseName: sql.outputs.databaseName
    applicationInsightsConnectionString: monitoring.outputs.applicationInsightsConnectionString
    maximumInstanceCount: maximumInstanceCount
    trafficProfile: trafficProfile
    instanceMemoryMB: instanceMemoryMB
    elasticPremiumSku: elasticPremiumSku
    dueWorkMode: dueWorkMode
    logLevel: logLevel
    apiBusinessUnits: apiBusinessUnits
    oidcIssuer: oidcIssuer
    oidcAudience: oidcAudience
    oidcGroups: oidcGroups
    oidcConsoleClientId: oidcConsoleClientId
    oidcConsoleClientSecret: oidcConsoleClientSecret
    reconcileBusinessUnits: reconcileBusinessUnits
    sourceUrls: sourceUrls
    reportSources: reportSources
    apiToken: apiToken
    recipientTokenKeys: recipientTokenKeys
    webhookSecret: webhookSecret
    webhookPreviousSecret: webhookPreviousSecret
    webhookIdempotent: webhookIdempotent
    notificationCategories: notificationCategories
    unsubscribeUrl: unsubscribeUrl
    unsubscribeSecret: unsubscribeSecret
    smtpHost: smtpHost
    smtpFrom: smtpFrom
    smtpUsername: smtpUsername
    smtpPassword: smtpPassword
    fcmCredentials: fcmCredentials
    fcmProjectId: fcmProjectId
    acsConnectionString: acsConnectionString
    smsFrom: smsFrom
    whatsappChannelId: whatsappChannelId
    channelLimits: channelLimits
    campaignProviders: campaignProviders
    campaignProviderTokens: campaignProviderTokens
    billingUrl: billingUrl
    billingToken: billingToken
  }
}

output functionAppName string = functionApp.outputs.name
output functionAppDefaultHostName string = functionApp.outputs.defaultHostName
output serviceBusNamespaceFqdn string = serviceBus.outputs.fullyQualifiedNamespace
output sqlServerFqdn string = sql.outputs.fullyQualifiedDomainName
output sqlDatabaseName string = sql.outputs.databaseName
output identityClientId string = identity.outputs.clientId
output identityName string = identity.outputs.name
output storageAccountName string = storage.outputs.name
output deploymentContainerName string = storage.outputs.deploymentContainerName
output planKind string = planKind
output trafficProfile string = trafficProfile

// Function app hosting the Go custom handler (binary "automation", see host.json), on
// either plan:
//
//   FlexConsumption  serverfarm FC1/FlexConsumption; the runtime, deployment container and
//                    scale live in properties.functionAppConfig. FUNCTIONS_WORKER_RUNTIME and
//                    FUNCTIONS_EXTENSION_VERSION are NOT set: "Flex Consumption plan
//                    deprecations" (functions-app-settings) lists FUNCTIONS_WORKER_RUNTIME as
//                    replaced by functionAppConfig.runtime.name and FUNCTIONS_EXTENSION_VERSION
//                    as set by the backend. Likewise siteConfig.ftpsState ("FTPS not
//                    supported"), linuxFxVersion, alwaysOn, use32BitWorkerProcess are not set.
//   ElasticPremium   serverfarm EP1..EP3 (Linux, reserved). Classic settings
//                    FUNCTIONS_EXTENSION_VERSION=~4 and FUNCTIONS_WORKER_RUNTIME=custom; no
//                    linuxFxVersion (the custom stack has an empty linuxFxVersion). Because the
//                    storage account has shared-key access disabled there is no Azure Files
//                    content share (it needs a key connection string): the app runs from a
//                    package blob fetched with the managed identity (WEBSITE_RUN_FROM_PACKAGE +
//                    WEBSITE_RUN_FROM_PACKAGE_BLOB_MI_RESOURCE_ID), as described in "Create an
//                    app without Azure Files" (storage-considerations).
//
// All connections are identity-based with the one user-assigned identity.

@description('Hosting plan.')
@allowed([
  'FlexConsumption'
  'ElasticPremium'
])
param planKind string = 'FlexConsumption'

@description('Hosting plan (serverfarm) name.')
param planName string

@description('Function app name (globally unique, becomes <name>.azurewebsites.net).')
param appName string

@description('Azure region.')
param location string

@description('Tags applied to plan and app.')
param tags object = {}

@description('Resource id of the user-assigned identity.')
param identityId string

@description('Client id of the user-assigned identity.')
param identityClientId string

@description('Storage account used for host storage and the deployment package.')
param storageAccountName string

@description('Blob endpoint of that account, with trailing slash.')
param storageBlobEndpoint string

@description('Blob service URL without trailing slash (AUTOMATION_STORAGE_BLOB_URL).')
param storageBlobUrl string

@description('Table service URL without trailing slash (AUTOMATION_STORAGE_TABLE_URL).')
param storageTableUrl string

@description('Deployment package container.')
param deploymentContainerName string

@description('Elastic Premium only: blob name of the package inside the deployment container.')
param packageBlobName string = 'automation.zip'

@description('Fully qualified Service Bus namespace (<name>.servicebus.windows.net).')
param serviceBusFullyQualifiedNamespace string

@description('Azure SQL server FQDN.')
param sqlServerFqdn string

@description('Azure SQL database name.')
param sqlDatabaseName string

@description('Application Insights connection string.')
param applicationInsightsConnectionString string

@description('Flex Consumption: maximum instance count (per-function scale group); 40 is the lowest maximum Flex Consumption accepts.')
@minValue(40)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Flex Consumption: instance memory size.')
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

@description('Elastic Premium: maximum burst instance count.')
@minValue(1)
@maxValue(100)
param maximumElasticWorkerCount int = 20

@description('Timer intervals: standard or low (see the profiles below and docs/deploy.md, "Cost at rest").')
@allowed([
  'standard'
  'low'
])
param trafficProfile string = 'standard'

// Timer schedules by traffic profile. function.json reads them as %DueWorkSchedule%,
// %OutboxRelaySchedule% and %ReconciliationSchedule% (app-setting binding expressions); the
// local host resolves the same names from shared/config. "low" lets instances go idle
// between runs: the poller runs every 5 min and relays what it committed at once
// (AUTOMATION_RELAY_AFTER_POLL), so the 5-min relay timer is only the safety net for
// messages written elsewhere (delivery facts, fan-out) or left by a failed publish.
var trafficProfiles = {
  standard: {
    dueWorkSchedule: '*/30 * * * * *'
    outboxRelaySchedule: '*/10 * * * * *'
    reconciliationSchedule: '0 */15 * * * *'
    relayAfterPoll: 'false'
  }
  low: {
    dueWorkSchedule: '0 */5 * * * *'
    outboxRelaySchedule: '30 */5 * * * *'
    reconciliationSchedule: '0 7 * * * *'
    relayAfterPoll: 'true'
  }
}
var profile = trafficProfiles[trafficProfile]

@description('Reconciliation: sources or rows per batch (1..1000).')
param reconcileBatchSize string = '100'

@description('Reconciliation: batches per run across every sweep.')
param reconcileMaxBatches string = '50'

@description('Reconciliation: due window of a first source pass, days.')
param reconcileDueDays string = '14'

@description('Reconciliation: business units whose sources are swept (comma-separated ids, or *).')
param reconcileBusinessUnits string = '*'

@description('Reconciliation: domain-app list endpoints by source type (SourceType=https://...,Other=https://...); empty: sweep the pipeline\'s own snapshots.')
param sourceUrls string = ''

@description('Report types rendered by an HTTP report source: ReportType=https://...,Other=https://...')
param reportSources string = ''

@description('Idempotency-Key records older than this many hours are purged.')
param idempotencyRetentionHours string = '168'

@description('DueWorkPoller mode.')
@allowed([
  'inline'
  'fanout'
])
param dueWorkMode string = 'inline'

@description('Rows claimed per poll (1..1000).')
param dueWorkBatchSize string = '100'

@description('Rows executed at once by an inline poll (1..64).')
param dueWorkConcurrency string = '4'

@description('Batches one inline poll run claims at most (1..1000); above 1 it drains with one batch ahead and stops when nothing is due. 1000 batches of 100 rows drain a 100,000-row herd in one run.')
param dueWorkDrainBatches string = '1000'

@description('Processing lease of a claimed row, seconds (>= 30).')
param leaseSeconds string = '300'

@description('Seconds after which a batch invocation (NotificationDispatch, DeliveryFactProjection) starts no further chunk and fails, so its batch is abandoned while the locks hold (the host renews no lock of a batch). 1..299, well under the Service Bus lockDuration (PT5M).')
param batchDeadlineSeconds string = '150'

@description('Application log level.')
@allowed([
  'debug'
  'info'
  'warn'
  'error'
])
param logLevel string = 'info'

@description('Business units the HTTP APIs may show at most (comma-separated ids, or *). The front door narrows it per request with the X-Automation-Business-Units header.')
param apiBusinessUnits string = '*'

@description('OpenID Connect bearer tokens (docs/security.md#openid-connect): the issuer whose tokens the APIs accept, exactly as their "iss" (Entra ID: https://login.microsoftonline.com/<tenant id>/v2.0). Empty: no OIDC tokens.')
param oidcIssuer string = ''

@description('OpenID Connect: the audience the tokens must carry ("aud"): the app registration\'s client id or application ID URI (api://<client id>).')
param oidcAudience string = ''

@description('OpenID Connect: the claim holding the caller\'s roles (Entra app roles: roles; values ingest, read, operate, admin, optionally as Automation.Read).')
param oidcRoleClaim string = 'roles'

@description('OpenID Connect: the claim holding the caller\'s business units (an array of ids, or "a,b", or "*").')
param oidcUnitsClaim string = 'automation_units'

@description('OpenID Connect: the claim listing the caller\'s groups (Entra ID: security-group object ids; the app registration\'s groupMembershipClaims puts them in tokens).')
param oidcGroupsClaim string = 'groups'

@description('OpenID Connect: roles and business units per group, the JSON text of an object from group object id to {"roles": ["operate"], "units": "bu-a,bu-b"} (docs/security.md#openid-connect); the app refuses to start on a malformed one. Empty: groups grant nothing.')
param oidcGroups string = 

@description('Per-tenant quotas (docs/security.md#quotas), per instance: live inbox streams per business unit.')
@minValue(1)
@maxValue(100000)
param quotaStreamsPerUnit int = 50

@description('Per-tenant quotas: live inbox streams per recipient in a unit.')
@minValue(1)
@maxValue(1000)
param quotaStreamsPerRecipient int = 3

@description('Per-tenant quotas: ingest events per second per API key (a batch of 500 counts 500).')
@minValue(1)
@maxValue(1000000)
param quotaIngestEventsPerSecond int = 1000

@description('Console sign-in throttle: the peers whose X-Forwarded-For names the client address (IPs or CIDR prefixes, comma-separated). The Functions host forwards from the loopback; add a front door or gateway only when it sits between the platform and the clients and appends its peer.')
param trustedProxies string = '127.0.0.1,::1'

@description('Per-tenant quotas: ingest events an API key may post at once (at least one full batch of 500).')
@minValue(500)
@maxValue(10000000)
param quotaIngestBurst int = 5000

@description('Console sign-in with OpenID Connect (docs/console.md#sign-in): the console\'s client id (an app registration with a web redirect URI https://<app>.azurewebsites.net/api/console/oidc/callback). Empty: bootstrap-token sign-in only.')
param oidcConsoleClientId string = ''

@description('Console sign-in: the console client\'s secret, as a Key Vault reference "@Microsoft.KeyVault(SecretUri=...)". Empty: a public client (PKCE alone).')
@secure()
param oidcConsoleClientSecret string = ''

@description('Console sign-in: the redirect URI registered for the console client; empty with a client id: https://<this app\'s default host name>/api/console/oidc/callback.')
param oidcConsoleRedirectUrl string = ''

@description('HTTP APIs: the bootstrap admin credential AUTOMATION_API_TOKEN (docs/security.md#credentials); pass a Key Vault reference "@Microsoft.KeyVault(SecretUri=...)". Empty: the routes rely on function keys alone, API keys and OIDC tokens are not checked, and the console is off.')
@secure()
param apiToken string = ''

@description('Inbox: the recipient-token secrets AUTOMATION_RECIPIENT_TOKEN_KEYS ("kid=secret,…", docs/security.md#recipient-tokens) as a Key Vault reference. Empty: no recipient tokens.')
@secure()
param recipientTokenKeys string = ''

@description('Delivery channels (shared/config): webhook signing secret (empty: no webhook channel); pass a Key Vault reference "@Microsoft.KeyVault(SecretUri=...)" rather than the secret itself.')
@secure()
param webhookSecret string = ''

@description('Webhook channel: a signing secret being rotated out (Standard Webhooks signs with both); a Key Vault reference; empty: none.')
@secure()
param webhookPreviousSecret string = ''

@description('Webhook receivers deduplicate by Idempotency-Key ("true"/"false").')
param webhookIdempotent string = 'false'

@description('Webhooks may reach private/VNet addresses ("true"/"false"); false is the SSRF guard.')
param webhookAllowPrivateNetworks string = 'false'

@description('One billing call\'s timeout, seconds (1..300; AUTOMATION_BILLING_TIMEOUT_SECONDS).')
param billingTimeoutSeconds string = '10'

@description('Notification categories as JSON (AUTOMATION_NOTIFICATION_CATEGORIES, docs/channels.md#categories); empty: the default set.')
param notificationCategories string = ''

@description('Public https address of the one-click unsubscribe route, e.g. https://<app>.azurewebsites.net/api/unsubscribe (AUTOMATION_UNSUBSCRIBE_URL); empty: no List-Unsubscribe link.')
param unsubscribeUrl string = ''

@description('Signing secret of one-click unsubscribe tokens (at least 32 bytes), a Key Vault reference; empty: no link.')
@secure()
param unsubscribeSecret string = ''

@description('Webhook request timeout, seconds.')
param webhookTimeoutSeconds string = '10'

@description('Channels: each delivery channel\'s provider limits as a JSON object {"<channel>":{"concurrency","ratePerSecond","timeoutSeconds"}} (AUTOMATION_CHANNEL_LIMITS, docs/configuration.md#channel-limits); empty: the defaults.')
param channelLimits string = ''

@description('Campaigns: HTTP action providers as a JSON array (AUTOMATION_CAMPAIGN_PROVIDERS, docs/campaigns.md#configured-providers); empty: none beside the delivery channels.')
param campaignProviders string = ''

@description('Campaigns: the providers\' bearer tokens as a JSON object {"name":"token"}; pass a Key Vault reference "@Microsoft.KeyVault(SecretUri=...)" rather than the tokens themselves.')
@secure()
param campaignProviderTokens string = ''

@description('Attributes: hours an attribute event id is remembered for deduplication (at least 24; longer than any source may redeliver).')
param attributeDedupeWindowHours string = '840'

@description('SMTP host of the email channel (empty: no email channel).')
param smtpHost string = ''

@description('SMTP port (0: 587, or 465 with security tls).')
param smtpPort string = '0'

@allowed([
  'starttls'
  'opportunistic'
  'tls'
  'none'
])
param smtpSecurity string = 'starttls'

param smtpUsername string = ''

@description('SMTP password; pass a Key Vault reference.')
@secure()
param smtpPassword string = ''

@description('Push channel: the Google service-account key file (JSON) of the Firebase project; pass a Key Vault reference. Empty: no push channel.')
@secure()
param fcmCredentials string = ''

@description('Push channel: the Firebase project id (empty: the key file project_id).')
param fcmProjectId string = ''

@description('Push channel: FCM base URL (empty: https://fcm.googleapis.com).')
param fcmEndpoint string = ''

@description('Push channel: timeout of one send to one device, seconds (1..300).')
param fcmTimeoutSeconds string = '10'

@description('SMS channel: the ACS connection string; pass a Key Vault reference. Empty: no sms channel.')
@secure()
param acsConnectionString string = ''

@description('SMS channel: the sender number or short code the ACS resource owns.')
param smsFrom string = ''

@description('WhatsApp channel: the ACS channel registration id (a GUID); empty: no whatsapp channel.')
param whatsappChannelId string = ''

@description('Billing provider of priced campaign actions (docs/billing.md): base URL; empty: none (priced actions are refused before anything is held).')
param billingUrl string = ''

@description('Bearer token of the billing provider; pass a Key Vault reference "@Microsoft.KeyVault(SecretUri=...)".')
@secure()
param billingToken string = ''

@description('Sender address of the email channel.')
param smtpFrom string = ''

@description('Support API: the highest rate (rows per minute) a paced release of support holds may ask for.')
param supportMaxReleasePerMinute string = '600'

var isFlex = planKind == 'FlexConsumption'

// Settings read by the Go code (shared/config/config.go, "Azure" settings). A test greps
// infra/*.bicep and infra/modules/*.bicep for each of these names.
var automationSettings = [
  {
    name: 'AUTOMATION_SQLSERVER_DSN'
    // go-mssqldb azuread DSN; "user+id" decodes to "user id" = client id of the
    // user-assigned identity. Not a secret: it carries no credential.
    value: 'sqlserver://${sqlServerFqdn}?database=${sqlDatabaseName}&fedauth=ActiveDirectoryManagedIdentity&user+id=${identityClientId}'
  }
  {
    name: 'AUTOMATION_SERVICEBUS_NAMESPACE'
    value: serviceBusFullyQualifiedNamespace
  }
  {
    name: 'AUTOMATION_STORAGE_TABLE_URL'
    value: storageTableUrl
  }
  {
    name: 'AUTOMATION_STORAGE_BLOB_URL'
    value: storageBlobUrl
  }
  {
    // azidentity (DefaultAzureCredential / ManagedIdentityCredential) picks the
    // user-assigned identity from AZURE_CLIENT_ID.
    name: 'AZURE_CLIENT_ID'
    value: identityClientId
  }
  {
    name: 'DueWorkSchedule'
    value: profile.dueWorkSchedule
  }
  {
    name: 'OutboxRelaySchedule'
    value: profile.outboxRelaySchedule
  }
  {
    name: 'AUTOMATION_RELAY_AFTER_POLL'
    value: profile.relayAfterPoll
  }
  {
    // Each instance publishes what it commits right after the commit; the OutboxRelay
    // timer is the safety net (docs/deploy.md#outbox-relay-runbook).
    name: 'AUTOMATION_EAGER_PUBLISH'
    value: 'true'
  }
  {
    name: 'AUTOMATION_RELAY_BUDGET_MS'
    value: '5000'
  }
  {
    name: 'AUTOMATION_INGEST_MAX_BACKLOG'
    value: '50000'
  }
  {
    name: 'AUTOMATION_DUEWORK_MODE'
    value: dueWorkMode
  }
  {
    name: 'AUTOMATION_DUEWORK_BATCH_SIZE'
    value: dueWorkBatchSize
  }
  {
    name: 'AUTOMATION_DUEWORK_CONCURRENCY'
    value: dueWorkConcurrency
  }
  {
    name: 'AUTOMATION_DUEWORK_DRAIN_BATCHES'
    value: dueWorkDrainBatches
  }
  {
    name: 'AUTOMATION_LEASE_SECONDS'
    value: leaseSeconds
  }
  {
    name: 'AUTOMATION_BATCH_DEADLINE_SECONDS'
    value: batchDeadlineSeconds
  }
  {
    name: 'AUTOMATION_LOG_LEVEL'
    value: logLevel
  }
  {
    // The Go runtime's soft memory limit, MiB: three quarters of the instance's memory,
    // leaving room for the Functions host and native memory (docs/performance.md#memory).
    name: 'AUTOMATION_MEMORY_LIMIT_MIB'
    value: string(instanceMemoryMB * 3 / 4)
  }
  {
    name: 'AUTOMATION_API_BUSINESS_UNITS'
    value: apiBusinessUnits
  }
  {
    name: 'AUTOMATION_OIDC_ISSUER'
    value: oidcIssuer
  }
  {
    name: 'AUTOMATION_OIDC_AUDIENCE'
    value: oidcAudience
  }
  {
    name: 'AUTOMATION_OIDC_ROLE_CLAIM'
    value: oidcRoleClaim
  }
  {
    name: 'AUTOMATION_OIDC_UNITS_CLAIM'
    value: oidcUnitsClaim
  }
  {
    name: 'AUTOMATION_OIDC_GROUPS_CLAIM'
    value: oidcGroupsClaim
  }
  {
    name: 'AUTOMATION_OIDC_GROUPS'
    value: oidcGroups
  }
  {
    // The Functions host forwards every HTTP request from the loopback; the last
    // X-Forwarded-For entry is the one the platform's front end added (docs/security.md#sessions).
    name: 'AUTOMATION_TRUSTED_PROXIES'
    value: trustedProxies
  }
  {
    name: 'AUTOMATION_QUOTA_STREAMS_PER_UNIT'
    value: string(quotaStreamsPerUnit)
  }
  {
    name: 'AUTOMATION_QUOTA_STREAMS_PER_RECIPIENT'
    value: string(quotaStreamsPerRecipient)
  }
  {
    name: 'AUTOMATION_QUOTA_INGEST_EVENTS_PER_SECOND'
    value: string(quotaIngestEventsPerSecond)
  }
  {
    name: 'AUTOMATION_QUOTA_INGEST_BURST'
    value: string(quotaIngestBurst)
  }
  {
    name: 'AUTOMATION_OIDC_CONSOLE_CLIENT_ID'
    value: oidcConsoleClientId
  }
  {
    name: 'AUTOMATION_OIDC_CONSOLE_CLIENT_SECRET'
    value: oidcConsoleClientSecret
  }
  {
    name: 'AUTOMATION_OIDC_CONSOLE_REDIRECT_URL'
    value: oidcConsoleRedirectUrl != '' || oidcConsoleClientId == '' ? oidcConsoleRedirectUrl : 'https://${appName}.azurewebsites.net/api/console/oidc/callback'
  }
  {
    name: 'ReconciliationSchedule'
    value: profile.reconciliationSchedule
  }
  {
    name: 'AUTOMATION_RECONCILE_BATCH_SIZE'
    value: reconcileBatchSize
  }
  {
    name: 'AUTOMATION_RECONCILE_MAX_BATCHES'
    value: reconcileMaxBatches
  }
  {
    name: 'AUTOMATION_RECONCILE_DUE_DAYS'
    value: reconcileDueDays
  }
  {
    name: 'AUTOMATION_RECONCILE_BUSINESS_UNITS'
    value: reconcileBusinessUnits
  }
  {
    name: 'AUTOMATION_SOURCE_URLS'
    value: sourceUrls
  }
  {
    name: 'AUTOMATION_REPORT_SOURCES'
    value: reportSources
  }
  {
    name: 'AUTOMATION_IDEMPOTENCY_RETENTION_HOURS'
    value: idempotencyRetentionHours
  }
  {
    name: 'AUTOMATION_BILLING_URL'
    value: billingUrl
  }
  {
    name: 'AUTOMATION_BILLING_TOKEN'
    value: billingToken
  }
  {
    name: 'AUTOMATION_BILLING_TIMEOUT_SECONDS'
    value: billingTimeoutSeconds
  }
  {
    name: 'AUTOMATION_API_TOKEN'
    value: apiToken
  }
  {
    name: 'AUTOMATION_RECIPIENT_TOKEN_KEYS'
    value: recipientTokenKeys
  }
  {
    name: 'AUTOMATION_WEBHOOK_SECRET'
    value: webhookSecret
  }
  {
    name: 'AUTOMATION_WEBHOOK_PREVIOUS_SECRET'
    value: webhookPreviousSecret
  }
  {
    name: 'AUTOMATION_WEBHOOK_IDEMPOTENT'
    value: webhookIdempotent
  }
  {
    name: 'AUTOMATION_WEBHOOK_ALLOW_PRIVATE_NETWORKS'
    value: webhookAllowPrivateNetworks
  }
  {
    name: 'AUTOMATION_WEBHOOK_TIMEOUT_SECONDS'
    value: webhookTimeoutSeconds
  }
  {
    name: 'AUTOMATION_NOTIFICATION_CATEGORIES'
    value: notificationCategories
  }
  {
    name: 'AUTOMATION_UNSUBSCRIBE_URL'
    value: unsubscribeUrl
  }
  {
    name: 'AUTOMATION_UNSUBSCRIBE_SECRET'
    value: unsubscribeSecret
  }
  {
    name: 'AUTOMATION_CHANNEL_LIMITS'
    value: channelLimits
  }
  {
    name: 'AUTOMATION_CAMPAIGN_PROVIDERS'
    value: campaignProviders
  }
  {
    name: 'AUTOMATION_CAMPAIGN_PROVIDER_TOKENS'
    value: campaignProviderTokens
  }
  {
    name: 'AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS'
    value: attributeDedupeWindowHours
  }
  {
    name: 'AUTOMATION_SMTP_HOST'
    value: smtpHost
  }
  {
    name: 'AUTOMATION_SMTP_PORT'
    value: smtpPort
  }
  {
    name: 'AUTOMATION_SMTP_SECURITY'
    value: smtpSecurity
  }
  {
    name: 'AUTOMATION_SMTP_USERNAME'
    value: smtpUsername
  }
  {
    name: 'AUTOMATION_SMTP_PASSWORD'
    value: smtpPassword
  }
  {
    name: 'AUTOMATION_SMTP_FROM'
    value: smtpFrom
  }
  {
    name: 'AUTOMATION_FCM_CREDENTIALS'
    value: fcmCredentials
  }
  {
    name: 'AUTOMATION_FCM_PROJECT_ID'
    value: fcmProjectId
  }
  {
    name: 'AUTOMATION_FCM_ENDPOINT'
    value: fcmEndpoint
  }
  {
    name: 'AUTOMATION_FCM_TIMEOUT_SECONDS'
    value: fcmTimeoutSeconds
  }
  {
    name: 'AUTOMATION_ACS_CONNECTION_STRING'
    value: acsConnectionString
  }
  {
    name: 'AUTOMATION_SMS_FROM'
    value: smsFrom
  }
  {
    name: 'AUTOMATION_WHATSAPP_CHANNEL_ID'
    value: whatsappChannelId
  }
  {
    name: 'AUTOMATION_SUPPORT_MAX_RELEASE_PER_MINUTE'
    value: supportMaxReleasePerMinute
  }
]

// Settings read by the Functions host itself.
var hostSettings = [
  // Identity-based host storage ("Connecting to host storage with an identity").
  {
    name: 'AzureWebJobsStorage__accountName'
    value: storageAccountName
  }
  {
    name: 'AzureWebJobsStorage__credential'
    value: 'managedidentity'
  }
  {
    name: 'AzureWebJobsStorage__clientId'
    value: identityClientId
  }
  // Service Bus trigger bindings use "connection": "ServiceBusConnection" (a prefix).
  {
    name: 'ServiceBusConnection__fullyQualifiedNamespace'
    value: serviceBusFullyQualifiedNamespace
  }
  {
    name: 'ServiceBusConnection__credential'
    value: 'managedidentity'
  }
  {
    name: 'ServiceBusConnection__clientId'
    value: identityClientId
  }
  {
    name: 'APPLICATIONINSIGHTS_CONNECTION_STRING'
    value: applicationInsightsConnectionString
  }
  {
    // User-assigned identity form; needs Monitoring Metrics Publisher on the component.
    name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING'
    value: 'Authorization=AAD;ClientId=${identityClientId}'
  }
]

// Elastic Premium only (never on Flex Consumption, see the header).
var elasticPremiumSettings = [
  {
    name: 'FUNCTIONS_EXTENSION_VERSION'
    value: '~4'
  }
  {
    name: 'FUNCTIONS_WORKER_RUNTIME'
    value: 'custom'
  }
  {
    name: 'WEBSITE_RUN_FROM_PACKAGE'
    value: '${storageBlobEndpoint}${deploymentContainerName}/${packageBlobName}'
  }
  {
    name: 'WEBSITE_RUN_FROM_PACKAGE_BLOB_MI_RESOURCE_ID'
    value: identityId
  }
]

var appSettings = concat(hostSettings, automationSettings, isFlex ? [] : elasticPremiumSettings)

// Schema of functionAppConfig: https://learn.microsoft.com/azure/templates/microsoft.web/sites
// (FunctionAppConfig / FunctionsDeployment / FunctionsRuntime / FunctionsScaleAndConcurrency).
var flexFunctionAppConfig = {
  deployment: {
    storage: {
      type: 'blobContainer'
      value: '${storageBlobEndpoint}${deploymentContainerName}'
      authentication: {
        type: 'UserAssignedIdentity'
        userAssignedIdentityResourceId: identityId
      }
    }
  }
  runtime: {
    // Custom handlers on Flex Consumption: runtime "custom", version "1.0".
    name: 'custom'
    version: '1.0'
  }
  scaleAndConcurrency: {
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
  }
}

var flexSku = {
  name: 'FC1'
  tier: 'FlexConsumption'
}

var elasticPremiumSkuObject = {
  name: elasticPremiumSku
  tier: 'ElasticPremium'
  family: 'EP'
}

// FTPS is switched off explicitly on Elastic Premium. On Flex Consumption properties.ftpsState
// is listed as deprecated ("FTPS not supported"), so it is not sent there.
var elasticPremiumSiteConfig = {
  ftpsState: 'Disabled'
}

var baseSiteConfig = {
  minTlsVersion: '1.2'
  scmMinTlsVersion: '1.2'
  http20Enabled: true
  appSettings: appSettings
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.web/serverfarms
resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: isFlex ? 'functionapp' : 'elastic'
  sku: isFlex ? flexSku : elasticPremiumSkuObject
  properties: {
    // Linux.
    reserved: true
    maximumElasticWorkerCount: isFlex ? null : maximumElasticWorkerCount
  }
}

// Schema: https://learn.microsoft.com/azure/templates/microsoft.web/sites
resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: appName
  location: location
  tags: tags
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    // Key Vault references ("@Microsoft.KeyVault(SecretUri=...)" in webhookSecret /
    // smtpPassword) resolve with the user-assigned identity, which roles.bicep grants Key
    // Vault Secrets User on keyVaultName. Without this the platform would use the
    // system-assigned identity, which this app does not have, and leave the reference text
    // as the setting's value (shared/config refuses to start on it).
    keyVaultReferenceIdentity: identityId
    functionAppConfig: isFlex ? flexFunctionAppConfig : null
    siteConfig: union(baseSiteConfig, isFlex ? {} : elasticPremiumSiteConfig)
  }
}

output name string = site.name
output id string = site.id
output defaultHostName string = site.properties.defaultHostName
output planKind string = planKind

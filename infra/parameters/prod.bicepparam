// Production environment. Same environment variables as dev.bicepparam:
//
//   export SQL_ENTRA_ADMIN_LOGIN='sql-admins-prod'
//   export SQL_ENTRA_ADMIN_OBJECT_ID='<object id>'
//   az deployment group create -g <rg> -f infra/main.bicep -p infra/parameters/prod.bicepparam
//
// The other variables it reads are listed in docs/deploy.md, "Before you start".
using '../main.bicep'

param environmentName = 'prod'
param location = 'northeurope'
// FlexConsumption, or ElasticPremium for always-warm instances (infra/README.md, "Plan
// choice") and for the fallback of docs/deploy.md, step 6 (new plan and app names).
param planKind = readEnvironmentVariable('PLAN_KIND', 'FlexConsumption')

param sqlEntraAdminLogin = readEnvironmentVariable('SQL_ENTRA_ADMIN_LOGIN')
param sqlEntraAdminObjectId = readEnvironmentVariable('SQL_ENTRA_ADMIN_OBJECT_ID')
param sqlEntraAdminPrincipalType = 'Group'
param sqlDatabaseSkuName = 'GP_S_Gen5'
param sqlBackupStorageRedundancy = 'Geo'
param sqlClientIpAddress = readEnvironmentVariable('SQL_CLIENT_IP', '')

param maximumInstanceCount = 100
param instanceMemoryMB = 2048
param elasticPremiumSku = 'EP1'

param dueWorkMode = 'inline'
// Timer intervals (docs/deploy.md, "Cost at rest"): 'low' lets a quiet environment idle.
param trafficProfile = 'standard'
// Key Vault (this resource group) whose secrets webhookSecret/smtpPassword reference; empty: none.
param keyVaultName = readEnvironmentVariable('KEY_VAULT_NAME', '')
param logLevel = 'info'

// Every parameter the runbook sets is declared here, read from the environment (docs/deploy.md,
// "Before you start"), so what-if and create see the same values and nothing passed with -p
// next to this file can be dropped. Secrets are Key Vault references
// ("@Microsoft.KeyVault(SecretUri=https://<vault>.vault.azure.net/secrets/<name>/)"); empty: none.
// The bootstrap admin credential AUTOMATION_API_TOKEN, as a Key Vault reference (docs/security.md#credentials).
param apiToken = readEnvironmentVariable('API_TOKEN', '')
// Recipient-token secrets as a Key Vault reference (docs/security.md#recipient-tokens).
param recipientTokenKeys = readEnvironmentVariable('RECIPIENT_TOKEN_KEYS', '')
// OpenID Connect issuer and audience (docs/security.md#openid-connect); empty: none.
param oidcIssuer = readEnvironmentVariable('OIDC_ISSUER', '')
param oidcAudience = readEnvironmentVariable('OIDC_AUDIENCE', '')
param oidcGroups = readEnvironmentVariable('OIDC_GROUPS', '')
param oidcConsoleClientId = readEnvironmentVariable('OIDC_CONSOLE_CLIENT_ID', '')
param oidcConsoleClientSecret = readEnvironmentVariable('OIDC_CONSOLE_CLIENT_SECRET', '')
param webhookSecret = readEnvironmentVariable('WEBHOOK_SECRET', '')
param webhookPreviousSecret = readEnvironmentVariable('WEBHOOK_PREVIOUS_SECRET', '')
// One-click unsubscribe (docs/channels.md#one-click-unsubscribe): the public https address of
// /api/unsubscribe and its signing key as a Key Vault reference; empty: no List-Unsubscribe link.
param unsubscribeUrl = readEnvironmentVariable('UNSUBSCRIBE_URL', '')
param unsubscribeSecret = readEnvironmentVariable('UNSUBSCRIBE_SECRET', '')
param smtpHost = readEnvironmentVariable('SMTP_HOST', '')
param smtpFrom = readEnvironmentVariable('SMTP_FROM', '')
param smtpUsername = readEnvironmentVariable('SMTP_USERNAME', '')
param smtpPassword = readEnvironmentVariable('SMTP_PASSWORD', '')
param fcmCredentials = readEnvironmentVariable('FCM_CREDENTIALS', '')
param acsConnectionString = readEnvironmentVariable('ACS_CONNECTION_STRING', '')
param channelLimits = readEnvironmentVariable('CHANNEL_LIMITS', '')
// Recipient preferences' categories as JSON (docs/channels.md#recipient-preferences); empty: the defaults.
param notificationCategories = readEnvironmentVariable('NOTIFICATION_CATEGORIES', '')
param campaignProviders = readEnvironmentVariable('CAMPAIGN_PROVIDERS', '')
param campaignProviderTokens = readEnvironmentVariable('CAMPAIGN_PROVIDER_TOKENS', '')
param billingUrl = readEnvironmentVariable('BILLING_URL', '')
param billingToken = readEnvironmentVariable('BILLING_TOKEN', '')
// Object id of the person or CI principal running the smoke checks (Azure Service Bus Data
// Sender, to publish one test event); of the one uploading the Elastic Premium package blob.
param operatorPrincipalId = readEnvironmentVariable('OPERATOR_PRINCIPAL_ID', '')
param deployerPrincipalId = readEnvironmentVariable('DEPLOYER_PRINCIPAL_ID', '')

param tags = {
  costCenter: 'automation-prod'
}

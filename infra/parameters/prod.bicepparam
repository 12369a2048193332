// Production environment. Same environment variables as dev.bicepparam:
//
//   export SQL_ENTRA_ADMIN_LOGIN='sql-admins-prod'
//   export SQL_ENTRA_ADMIN_OBJECT_ID='<object id>'
//   az deployment group create -g <rg> -f infra/main.bicep -p infra/parameters/prod.bicepparam
using '../main.bicep'

param environmentName = 'prod'
param location = 'northeurope'
// Switch to 'ElasticPremium' for always-warm instances (see infra/README.md, "Plan choice").
param planKind = 'FlexConsumption'

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

param tags = {
  costCenter: 'automation-prod'
}

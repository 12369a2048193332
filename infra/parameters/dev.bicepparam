// Development environment. The Entra admin of Azure SQL comes from the environment so no
// tenant-specific ids live in the repository:
//
//   export SQL_ENTRA_ADMIN_LOGIN='sql-admins-dev'          # display name of a group (or user)
//   export SQL_ENTRA_ADMIN_OBJECT_ID='<object id of it>'   # az ad group show -g <name> --query id -o tsv
//   az deployment group create -g <rg> -f infra/main.bicep -p infra/parameters/dev.bicepparam
using '../main.bicep'

param environmentName = 'dev'
param location = 'northeurope'
param planKind = 'FlexConsumption'

param sqlEntraAdminLogin = readEnvironmentVariable('SQL_ENTRA_ADMIN_LOGIN')
param sqlEntraAdminObjectId = readEnvironmentVariable('SQL_ENTRA_ADMIN_OBJECT_ID')
param sqlEntraAdminPrincipalType = 'Group'
param sqlDatabaseSkuName = 'GP_S_Gen5'
param sqlBackupStorageRedundancy = 'Local'
// Your public IPv4 to run `automation migrate` from your machine; empty = no rule.
param sqlClientIpAddress = readEnvironmentVariable('SQL_CLIENT_IP', '')

param maximumInstanceCount = 40
param instanceMemoryMB = 2048

param dueWorkMode = 'inline'
// Timer intervals (docs/deploy.md, "Cost at rest"): 'low' lets a quiet environment idle.
param trafficProfile = 'low'
// Key Vault (this resource group) whose secrets webhookSecret/smtpPassword reference; empty: none.
param keyVaultName = readEnvironmentVariable('KEY_VAULT_NAME', '')
param logLevel = 'debug'

param tags = {
  costCenter: 'automation-dev'
}

package azure

import (
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// NewCredential returns the token credential for TraceOptions.Credential and
// ServiceBusOptions.Credential, so that no package but this one imports azidentity.
//
// With a managedIdentityClientID it is that user-assigned managed identity (what the
// Functions app uses in Azure). Without one it is azidentity's default chain: environment
// variables, workload identity, a system-assigned managed identity, then developer sign-ins
// (Azure CLI, azd), which is what a developer pointing a local run at a real account needs.
func NewCredential(managedIdentityClientID string) (azcore.TokenCredential, error) {
	if managedIdentityClientID != "" {
		cred, err := azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{
			ID: azidentity.ClientID(managedIdentityClientID),
		})
		if err != nil {
			return nil, fmt.Errorf("azure: managed identity %s: %w", managedIdentityClientID, err)
		}
		return cred, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("azure: default credential: %w", err)
	}
	return cred, nil
}

// Package azure holds the Azure adapters of the platform's seams, and is the only package
// that imports the Azure SDKs:
//
//   - TraceStore implements trace.Store on Table Storage (the AutomationJob table) and Blob
//     Storage (diagnostics blobs). It passes trace/tracetest against Azurite.
//   - ServiceBusPublisher implements bus.Publisher on Service Bus (azservicebus), setting
//     MessageId for duplicate detection and SessionId for per-entity ordering.
//   - NewCredential returns the token credential (managed identity in Azure) the
//     constructors take, so callers never import azidentity or azcore themselves.
//
// Local development uses Azurite (npm "azurite", pinned in package.json) for Table and
// Blob: scripts/azurite.sh start prints the connection string the tests read from
// AZURITE_CONNECTION. Service Bus has no local server here; its conformance run needs
// AUTOMATION_SERVICEBUS_CONNECTION and is skipped, with the reason, without it.
package azure

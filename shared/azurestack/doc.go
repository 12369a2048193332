// Package azurestack describes the local stand-ins of the Azure services that the real-server
// suites run against with `make test/azure` (docker-compose.azure.yml): SQL Server 2022, the
// official Azure Service Bus emulator and Azurite.
//
// The emulator reads its entities from a Config.json at start; it cannot create them later
// over AMQP. EmulatorConfig builds that file from the topology table (shared/topology), so
// the emulator holds exactly the queues, topics and subscriptions the app uses, plus the two
// queues of the bus conformance suite (ConformanceQueues). The committed copy,
// scripts/azure-stack/servicebus-config.json, is regenerated with
//
//	go run ./functions emulator-config -o scripts/azure-stack/servicebus-config.json
//
// (or `go generate ./shared/azurestack`), and a test fails when it differs from what the
// topology gives.
//
// The emulator's limits (its Config-schema.json in Azure/azure-service-bus-emulator-installer)
// are narrower than Azure's: one namespace named "sbemulatorns", at most 50 queues and topics,
// a duplicate-detection window of at most PT5M, a message time-to-live of at most PT1H, a
// lock of PT5M at most and MaxDeliveryCount of 10 at most. Where the deployed value is
// larger (duplicate detection PT10M in infra/modules/servicebus.bicep) the emulator gets its
// maximum; lock duration and MaxDeliveryCount are the deployed ones.
//
// None of this has run on the development machines (no Docker there); what runs here is
// the Config.json check, the parsing of the emulator's connection string and the SQL Server
// DSN that `make test/azure` sets, and the skip messages of the real-server tests.
package azurestack

//go:generate go run ../../functions emulator-config -o ../../scripts/azure-stack/servicebus-config.json

// Package local is the embedded runtime's stand-in for the Azure Functions host: it reads
// the same functions/*/function.json folders, fires timer functions on their NCRONTAB
// schedules and delivers in-process bus messages to Service Bus functions - each as the
// host's own invocation payload POSTed through the same funchost router the Azure host
// calls (docs/functions-protocol.md): one message per invocation, or, for a function
// declared "cardinality": "many", the messages waiting at once (up to
// topology.MaxMessageBatchSize) in one batch payload. Non-2xx answers are retried by the bus
// up to its MaxDeliveryCount, then dead-lettered, as Service Bus does (a failed batch: each
// of its messages by its own delivery count). Run wakes at once when the eager publisher
// published (Wake) and can run several consumers per destination (SetConcurrency), a
// session's messages still one at a time and in order (bus.Memory.DrainDestination); it
// fires the timers on a goroutine of their own, so a long timer invocation never holds up
// the deliveries.
package local

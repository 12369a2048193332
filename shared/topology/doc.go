// Package topology is the one table of the Functions app's messaging and functions: the
// Service Bus topics, subscriptions and queues, and every function with its trigger. The bus
// wiring (outbox destinations, the event publisher, the due-work fan-out), the local host
// and the composition root take their names from here, and a test holds the table equal to
// functions/*/function.json (every folder has a row and every row a folder, with the same
// trigger type, binding name, schedule setting, queue, topic, subscription and route), so
// a name changes in one place. It imports nothing from the project (the bottom layer).
package topology

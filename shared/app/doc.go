// Package app is the composition root: it wires the store, trace, bus, scheduler,
// reminder and delivery services and the Functions router for a runtime - Azure (SQL
// Server, Service Bus, Table/Blob) or embedded (SQLite, in-process bus, local trace), part
// by part as configured. Only this package knows every other one.
package app

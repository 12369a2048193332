// Package bus is the messaging seam: a Message, a Publisher, a Handler, and the in-process
// bus used by the embedded runtime. Service Bus implements the same Publisher in the azure
// package; both pass bus/bustest.
package bus

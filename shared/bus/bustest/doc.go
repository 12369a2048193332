// Package bustest is the one conformance suite for the bus contract. The in-process bus
// (bus.Memory) and the Service Bus adapter both run it through a Harness, so the two
// cannot drift apart:
//
//	func TestMemoryConformance(t *testing.T) {
//		bustest.Run(t, func(t *testing.T) bustest.Harness { return newMemoryHarness(t) })
//	}
//
// The contract checked here:
//   - Publish rejects a message without ID or Destination.
//   - Messages of one destination are delivered in publish order (FIFO), and only to a
//     receiver of that destination.
//   - A message ID published again to the same destination within the duplicate window is
//     accepted and delivered once; the first body wins.
//   - Publish copies the body: the caller may reuse its slice; a handler that mutates a
//     delivered body does not change what a redelivery sees.
//   - DeliveryCount is 1 on the first delivery, whatever the publisher set.
//   - A handler error abandons the message: it is redelivered with DeliveryCount + 1.
//   - After MaxDeliveryCount failed deliveries the message is dead-lettered with a reason.
//   - A handler error marked automation.Permanent dead-letters at once, with its reason.
package bustest

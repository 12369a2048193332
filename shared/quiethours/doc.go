// Package quiethours is the quiet-hours rule of marketing deliveries (docs/channels.md#quiet-hours):
// a local-time window, such as 21:00–08:00, in the recipient's zone (else the business
// unit's), inside which a marketing delivery waits until the window ends. Transactional
// deliveries pass.
//
// A window starts at Start on a local date and ends at End on the same date, or on the next
// one when End is not after Start (it crosses midnight). Both ends are resolved to instants
// with the scheduler's DST rule (localtime.Resolve, docs/architecture.md#dst-product-rule):
// an end in a spring-forward gap moves forward by the gap's length, an ambiguous end in a
// fall-back overlap takes the first instant. An instant is inside a window when start <=
// instant < end. The rule is pure: the caller passes now (UTC) and stores the answer.
package quiethours

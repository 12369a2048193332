// Package funchost speaks the Azure Functions custom-handler protocol: it decodes the
// host's invocation requests, routes them by function name to thin handlers, maps handler
// errors to the replies the host understands, and serves forwarded HTTP functions.
//
// The facts this package relies on are collected, with their public sources, in
// docs/functions-protocol.md ("the protocol doc" below; the links name its sections).
//
// # Wire shape (docs/functions-protocol.md#wire-shape)
//
// The host calls the handler over plain HTTP on 127.0.0.1:$FUNCTIONS_CUSTOMHANDLER_PORT:
//
//   - GET / is the readiness probe; any reply counts, we answer 200 {"status":"ok"}.
//   - Non-HTTP triggers arrive as POST /{FunctionName} (the function folder name) with a
//     JSON body {"Data":{...},"Metadata":{...}} ([InvocationRequest]).
//   - HTTP functions with enableForwardingHttpRequest arrive as the original request on the
//     original path, /api/... ([Router.RegisterHTTP]).
//
// # Who may call (the invocation paths carry no credentials)
//
// An invocation carries neither a token nor a business-unit scope: the protocol trusts its
// only caller. So the custom handler listens on 127.0.0.1 only ([Addr]; the host dials
// http://127.0.0.1:<port> on the same instance), is never exposed through the app's front
// end (the host takes the public requests, checks function keys and forwards only the HTTP
// functions' /api/... requests), and so the Functions host is the only process that can
// reach POST /{FunctionName}. A listener anyone else can reach — the embedded runtime's
// local `serve` — must not serve the invocation paths: it serves [Router.ForwardedOnly]
// (readiness and /api/... only, each route with its own token and scope check), and its
// local host invokes the [Router] in process.
//
// The reply to an invocation is always JSON with Content-Type application/json and a
// non-empty body ([InvocationResponse]): the host reads the body with a JSON media-type
// formatter and never completes an invocation whose body is empty or null.
//
// # Error mapping (one place: Router)
//
//	handler result                      reply                      host behaviour (docs/functions-protocol.md#wire-shape, docs/functions-protocol.md#service-bus-trigger)
//	nil error                           200 InvocationResponse     outputs written; SB message completed
//	automation.Permanent(err)           200, err appended to Logs  SB message completed (caller recorded it)
//	automation.RetryAfter(d, err)       500 {"error": "..."}       as below, logged at INFO (expected:
//	                                                               another worker holds the claim)
//	any other error, decode errors,     500 {"error": "..."}       invocation failed; SB message abandoned,
//	  handler panic                                                redelivered, dead-lettered by the broker
//	                                                               at MaxDeliveryCount; timer waits for
//	                                                               its next occurrence
//	unknown function name               404 {"error": "..."}       invocation failed
//	malformed invocation JSON           400 {"error": "..."}       invocation failed
//	body larger than MaxBodyBytes       413 {"error": "..."}       invocation failed
//
// On forwarded HTTP paths (/api/...) the router's own refusals are answered as RFC 9457
// problem details (application/problem+json; type about:blank, title, status, detail, code),
// the error shape of the HTTP APIs: no such route 404 NotFound, wrong method 405
// MethodNotAllowed (with Allow), body over MaxBodyBytes 413 ContentTooLarge, a handler
// panic before its answer started 500 Internal (no detail of the panic).
//
// Decode errors ([DecodeError]) are retryable on purpose: a message that can never be
// decoded ends up in the broker's dead-letter queue after MaxDeliveryCount attempts
// (there is no settlement API in a custom handler, docs/functions-protocol.md#service-bus-trigger "Failure, retry, dead-letter"),
// which keeps it inspectable. A handler that has recorded a poison message itself returns
// automation.Permanent(err) instead. Other intents (automation.RetryAfter, automation.Unknown)
// are answered like any other error: the host has no per-invocation delay.
//
// # Service Bus keys decoded (docs/functions-protocol.md#service-bus-trigger "Invocation payload", docs/functions-protocol.md#wire-shape "Request payload")
//
//	ServiceBusMessage field  source                                    encoding accepted
//	Body                     Data[binding]                             JSON string holding a JSON string
//	                                                                   literal (default dataType string:
//	                                                                   decoded twice); a plain JSON string;
//	                                                                   base64 string (dataType binary);
//	                                                                   a JSON object/array, kept as is
//	MessageID                Metadata["MessageId"]                     "\"id\"" or "id"
//	SessionID                Metadata["SessionId"]                     same
//	CorrelationID            Metadata["CorrelationId"]                 same
//	ContentType              Metadata["ContentType"]                   same
//	DeliveryCount            Metadata["DeliveryCount"]                 "1", 1 or "\"1\""
//	EnqueuedTimeUtc          Metadata["EnqueuedTimeUtc"], else         "2023-10-12T20:13:49" (no zone = UTC),
//	                         Metadata["EnqueuedTime"]                  RFC 3339 with Z or offset, either
//	                                                                   possibly JSON-encoded once more
//	ApplicationProperties    Metadata["ApplicationProperties"], else   JSON object (or a JSON string holding
//	                         Metadata["UserProperties"]                one); numbers kept as json.Number
//
// A key is looked up exactly first, then case-insensitively (the extension's binding data
// dictionary is case-insensitive). Missing or null keys leave the zero value; a present but
// malformed key is a [DecodeError] naming it.
//
// Shadowing: when the trigger value is a string holding a JSON object, the host copies the
// object's top-level non-null, non-array properties into Metadata, overwriting keys of the
// same name (docs/functions-protocol.md#wire-shape "Request payload", Utility.ApplyBindingData; docs/functions-protocol.md#pitfalls last bullet). A body field
// "MessageId" therefore replaces the broker's MessageId. The decoder never returns a value
// that may have come from the body: for each key above it looks for a same-named (case-
// insensitive) top-level body field; if there is one, the Metadata value is used only when
// it provably differs from that field (both are plain strings and differ — the body's value
// cannot have produced it). Otherwise the key is treated as shadowed: the alias in the
// table is tried (EnqueuedTime, UserProperties: the extension sends the same value under
// both names), and if none is usable the field keeps its zero value and the key is listed
// in [ServiceBusMessage.Shadowed]. Binary bodies are never shadowed (the host only parses
// string trigger values).
//
// # Service Bus batches (docs/functions-protocol.md#service-bus-batches)
//
// A trigger declared "cardinality": "many" gets several messages per invocation, and must
// also declare "dataType": "string" (or "binary"): without it the host binds object[], which
// fails for a custom handler (azure-functions-host#6487), and [LoadFunctionFolders] refuses
// it. The bodies come as one array in Data[binding] (the host's string[], each body encoded
// once), and each per-message value as an array in Metadata under the key with the suffix
// "Array" (MessageIdArray, DeliveryCountArray, …), each array serialized into a JSON string
// as the host serializes any non-object value (ScriptInvocationContextExtensions).
// [DecodeServiceBusBatch] decodes them into one item per message, each with its own error.
//
// # Timer keys decoded (docs/functions-protocol.md#timer-trigger "Invocation payload")
//
// Data[binding] is a JSON object {Schedule:{AdjustForDST}, ScheduleStatus:{Last, Next,
// LastUpdated}|null, IsPastDue}; ScheduleStatus is null when useMonitor is false, the
// schedule is shorter than a minute, or no storage is configured, so it is a pointer.
// IsPastDue is only computed for invocations at startup; compare now with
// ScheduleStatus.Next to detect an overrun.
package funchost

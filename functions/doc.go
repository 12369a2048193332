// Command automation is the only binary: the Azure Functions custom handler and the
// embedded runtime's commands (config → app → serve).
//
//	automation                          with FUNCTIONS_CUSTOMHANDLER_PORT set: serve the
//	                                    custom-handler protocol for the Functions host
//	automation serve [-port N] [-functions DIR]
//	                                    run locally: the same routes on 127.0.0.1, timers
//	                                    from function.json, the in-process bus
//	automation replay [-db DIR] <scenario.json>
//	automation migrate                  apply SQL migrations (SQL Server or SQLite)
//	automation publish [-local URL [-token T]] <events.json>
//	                                    send CloudEvents to Service Bus (or to a local serve)
//	automation support <command> ...    the support API from a terminal (support.go)
//	automation emulator-config [-o file]
//	                                    the Service Bus emulator's Config.json from the topology
package main

// Package logsink holds Buffer, an in-memory sink for a log or a command's output that the
// writers (a server's goroutines, the dispatcher, a serve loop) and a reader (the test that
// waits for a line) share safely: every Write and every read holds one mutex. It is what the
// tests of functions, shared/app and the API packages each kept as a copy (lockedBuffer,
// syncBuffer, lockedLog). No project imports.
package logsink

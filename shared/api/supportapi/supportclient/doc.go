// Package supportclient calls the support API (package supportapi) over HTTP and renders its
// answers for a terminal: the client behind `automation support`. Client sends one request
// per call and returns the raw answer (so -json prints exactly what the API sent); Printer
// renders an answer as tables, or as indented JSON.
package supportclient

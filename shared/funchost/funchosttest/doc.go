// Package funchosttest gives tests the repository's Azure Functions folders (functions/,
// one function.json each) as funchost reads them, so each test of a table drawn from them
// (topology's, the router's, the listener's routes) reads them the same way. Imported by
// tests only.
package funchosttest

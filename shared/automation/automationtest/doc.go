// Package automationtest holds the tests' helpers on the domain vocabulary, written once for
// every package whose tests need them: which member a coded error (automation.Error) names,
// and instants written as RFC 3339 literals. It imports the domain vocabulary and the
// standard library only.
package automationtest

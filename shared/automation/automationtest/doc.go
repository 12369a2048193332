// Package automationtest holds the tests' checks of the domain's coded errors
// (automation.Error), written once for every package whose tests assert which member a
// refusal names. It imports the domain vocabulary and the standard library only.
package automationtest

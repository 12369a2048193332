// Package infra holds the Bicep templates and parameter files that deploy the Functions app
// (infra/README.md, docs/deploy.md), and the tests that check them without the Bicep CLI:
// every app setting the code reads is set by the templates, every secret comes from the
// environment or Key Vault, and the runbook exports every variable the parameter files
// read (bicep_test.go, runbook_test.go, docs_test.go). It has no code of its own.
package infra

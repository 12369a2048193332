// Package config is the only reader of environment variables. Load reads them into a
// validated Config; Settings lists every variable the code reads, with where it must be
// declared (local.settings.sample.json, the Bicep app settings), so a test can fail when
// code and deployment drift apart.
package config

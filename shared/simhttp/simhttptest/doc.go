// Package simhttptest starts the simulated providers built on shared/simhttp (acssim,
// fcmsim) for a test: Start makes one from its Config, serves it on a free port of
// 127.0.0.1 and closes it when the test ends. shared/campaign/campaigntest.StartSim does
// the same for providersim, whose New cannot fail.
package simhttptest

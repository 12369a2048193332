// Package docs holds the guides in Markdown (README links them) and the tests that keep
// them true: every shell block the README and the guides show is run, every link and
// anchor resolves, and nothing cites a file outside the repository (docs_test.go,
// status_test.go). It has no code of its own.
package docs

// Package apidoc bundles the product's OpenAPI documents into one (docs/api-conventions.md#one-document-for-the-product).
//
// Each API package keeps its own hand-written OpenAPI 3.1 document beside its handlers
// (shared/api/<name>/openapi.yaml, reportapi's openapi.json); its tests check it both ways
// against the registered routes and validate real answers against it. Bundle merges them,
// with this package's own document (GET /api/openapi.json itself), into one:
//
//	api documents ──parse (YAML or JSON)──▶ per document:
//	    components: same name and same content → one entry; same name, other content →
//	                renamed <Tag><Name> and every $ref of that document follows;
//	    securitySchemes: one per kind (the same scheme ignoring its description), and the
//	                document's security requirements renamed to it;
//	    paths: copied; a path twice, or an operationId twice, is an error;
//	    each operation: tagged with its API's tag, and given its document's top-level
//	                security when it has none of its own
//	──▶ one document: info, servers, tags (one per API, with its document's description),
//	    paths, components; encoded as indented JSON with sorted keys (stable bytes).
//
// The bundle is served at GET /api/openapi.json (authenticated like every route: Register)
// and kept in the repository as docs/openapi.json; a test fails when the file differs from
// what Bundle returns (`make openapi` rewrites it), `make lint` lints the file with Redocly
// CLI's recommended rules (redocly.yaml), and a test generates a typed TypeScript client
// from it with openapi-typescript.
package apidoc

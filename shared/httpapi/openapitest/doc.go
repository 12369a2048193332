// Package openapitest checks an HTTP adapter against its OpenAPI 3.1 document, for the
// adapters' tests (it imports "testing": tests only import it). One document, three checks:
//
//   - the document itself is valid OpenAPI 3.1 (CheckDocument);
//   - its operations ("METHOD /path") are exactly the router's patterns, both ways
//     (CheckRoutes), and a deliberately renamed operation is caught both ways
//     (CheckRenameCaught);
//   - real request and answer pairs match it (Validate, Mismatch): a 2xx or 3xx exchange
//     must match its operation (parameters, body, headers, response schema), an error answer
//     must be a documented answer of that status. A deliberately broken copy (Edit) must
//     refuse an answer the real document accepts.
//
// Documents are parsed with github.com/pb33f/libopenapi and exchanges validated with
// github.com/pb33f/libopenapi-validator.
package openapitest

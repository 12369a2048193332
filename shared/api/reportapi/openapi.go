package reportapi

import _ "embed" // openapi.json

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (openapi.json; shared/api/apidoc
// bundles it with the other APIs' into the product's one document, docs/openapi.json).
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

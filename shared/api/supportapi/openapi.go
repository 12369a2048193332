package supportapi

import _ "embed" // openapi.yaml

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (openapi.yaml; shared/api/apidoc
// bundles it with the other APIs' into the product's one document, docs/openapi.json).
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

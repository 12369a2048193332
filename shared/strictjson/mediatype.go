package strictjson

import (
	"mime"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
)

// The request media types of the HTTP APIs: one rule for the event ingest route and the
// management APIs (docs/api-conventions.md#content-types, docs/gateway.md#content-modes).
const (
	MediaTypeJSON            = "application/json"
	MediaTypeCloudEvent      = "application/cloudevents+json"
	MediaTypeCloudEventBatch = "application/cloudevents-batch+json"
)

// MediaType checks a request's Content-Type against the media types a route takes
// (parameters such as charset=utf-8 allowed; a missing Content-Type is taken as the
// route's first type) and returns the media type in lower case. Errors: an
// automation.Error with Code automation.CodeUnsupportedMediaType (HTTP 415) naming the
// types the route takes, or CodeMalformed for a Content-Type that does not parse, or a
// charset other than UTF-8.
func MediaType(contentType string, allowed ...string) (string, error) {
	if strings.TrimSpace(contentType) == "" {
		return allowed[0], nil
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", &automation.Error{Code: automation.CodeMalformed, Field: "Content-Type", Message: "does not parse as a media type: " + err.Error()}
	}
	for _, a := range allowed {
		if mt != a {
			continue
		}
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			return "", &automation.Error{Code: automation.CodeUnsupportedMediaType, Field: "Content-Type",
				Message: "charset " + cs + " is not taken: JSON is UTF-8"}
		}
		return mt, nil
	}
	return "", &automation.Error{Code: automation.CodeUnsupportedMediaType, Field: "Content-Type",
		Message: "media type " + mt + " is not taken here; send " + strings.Join(allowed, " or ")}
}

package settingsapi

import (
	"context"
	_ "embed" // openapi.yaml
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML).
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// Registrar is where routes go (funchost.Router.RegisterHTTP; serve and the custom handler
// share it).
type Registrar = httpapi.Registrar

// Route is one registered route.
type Route struct {
	Method string
	Path   string // ServeMux path pattern, e.g. /api/reminder-settings/{guid}
}

// Routes lists every route Register adds (from Endpoints).
var Routes = func() []Route {
	var out []Route
	for _, m := range httpapi.Metas(Endpoints(nil)) {
		out = append(out, Route{Method: m.Method, Path: m.Path})
	}
	return out
}()

// Function folder names of the HTTP functions serving these routes.
const (
	BusinessUnitsFunction    = "BusinessUnitsApi"
	ReminderSettingsFunction = "ReminderSettingsApi"
)

// Page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

type handlers struct {
	admin *reminder.Admin
}

// Register adds every route to r, each wrapped by api (auth, scope, Idempotency-Key,
// problem details).
func Register(r Registrar, api *httpapi.API, admin *reminder.Admin) {
	httpapi.Mount(r, api, Endpoints(admin)...)
}

// Endpoints declares the routes over admin (nil: the declarations only, for checks).
func Endpoints(admin *reminder.Admin) []httpapi.Route {
	h := handlers{admin: admin}
	page := &httpapi.Paging{Default: DefaultLimit, Max: MaxLimit}
	buTag := func(b BusinessUnit) int64 { return b.Version }
	setTag := func(s setting) int64 { return s.version }
	type none = struct{}
	return []httpapi.Route{
		httpapi.Endpoint[none, httpapi.Page[BusinessUnit]]{Method: "GET", Path: "/api/business-units", Paging: page, Call: h.listBusinessUnits},
		httpapi.Endpoint[businessunit.Input, BusinessUnit]{Method: "POST", Path: "/api/business-units", QueryUnchecked: true,
			Body: httpapi.BodyRequired, Status: http.StatusCreated, ETag: buTag, Call: h.createBusinessUnit},
		httpapi.Endpoint[none, BusinessUnit]{Method: "GET", Path: "/api/business-units/{id}", ETag: buTag,
			Call: func(ctx context.Context, in *httpapi.In[none]) (BusinessUnit, error) {
				rec, err := h.admin.Units().Get(ctx, scopeOf(ctx), in.Path("id"))
				return buView(rec), err
			}},
		httpapi.Endpoint[businessunit.Input, BusinessUnit]{Method: "PUT", Path: "/api/business-units/{id}", QueryUnchecked: true,
			IfMatch: httpapi.IfMatchRequired, Body: httpapi.BodyRequired, ETag: buTag,
			Call: func(ctx context.Context, in *httpapi.In[businessunit.Input]) (BusinessUnit, error) {
				in.Body.UpdatedBy = httpapi.CallerFrom(ctx).Operator
				rec, prop, err := h.admin.UpdateBusinessUnit(ctx, scopeOf(ctx), in.Path("id"), in.Body, in.Version)
				view := buView(rec)
				view.Propagation = &prop
				return view, err
			}},
		httpapi.Endpoint[none, httpapi.Page[setting]]{Method: "GET", Path: "/api/reminder-settings", Query: []string{"businessUnitId", "sourceType", "active"},
			Paging: page, Call: h.listSettings},
		httpapi.Endpoint[settingBody, setting]{Method: "POST", Path: "/api/reminder-settings", QueryUnchecked: true,
			Body: httpapi.BodyRequired, Status: http.StatusCreated, ETag: setTag, Call: h.createSetting},
		httpapi.Endpoint[none, setting]{Method: "GET", Path: "/api/reminder-settings/{guid}", ETag: setTag,
			Call: func(ctx context.Context, in *httpapi.In[none]) (setting, error) {
				return settingOf(h.admin.GetSetting(ctx, scopeOf(ctx), in.Path("guid")))
			}},
		httpapi.Endpoint[settingBody, setting]{Method: "PUT", Path: "/api/reminder-settings/{guid}", QueryUnchecked: true,
			IfMatch: httpapi.IfMatchRequired, Body: httpapi.BodyRequired, ETag: setTag,
			Call: func(ctx context.Context, in *httpapi.In[settingBody]) (setting, error) {
				raw, err := in.Body.raw()
				if err != nil {
					return setting{}, err
				}
				return settingOf(h.admin.UpdateSettingBy(ctx, scopeOf(ctx), in.Path("guid"), raw, in.Version, httpapi.CallerFrom(ctx).Operator))
			}},
		// An optional body, "{}"; chunked too, whatever Content-Length says.
		httpapi.Endpoint[none, setting]{Method: "POST", Path: "/api/reminder-settings/{guid}/deactivate", QueryUnchecked: true,
			IfMatch: httpapi.IfMatchRequired, Body: httpapi.BodyOptional, ETag: setTag,
			Call: func(ctx context.Context, in *httpapi.In[none]) (setting, error) {
				return settingOf(h.admin.DeactivateSettingBy(ctx, scopeOf(ctx), in.Path("guid"), in.Version, httpapi.CallerFrom(ctx).Operator))
			}},
	}
}

func scopeOf(ctx context.Context) automation.Scope {
	return httpapi.CallerFrom(ctx).Scope
}

// --- business units ------------------------------------------------------------------

// BusinessUnit is the business-unit resource.
type BusinessUnit struct {
	ID            string                `json:"id"`
	Name          string                `json:"name"`
	TimeZone      string                `json:"timeZone"`                // IANA id used for scheduling
	TimeZoneGiven string                `json:"timeZoneGiven,omitempty"` // as given, when it was a Windows id
	Roles         map[string][]string   `json:"roles,omitempty"`
	Version       int64                 `json:"version"`
	UpdatedOn     string                `json:"updatedOn"` // RFC 3339 UTC
	Propagation   *reminder.Propagation `json:"propagation,omitempty"`
}

func buView(rec store.BusinessUnitRecord) BusinessUnit {
	return BusinessUnit{ID: rec.ID, Name: rec.Name, TimeZone: rec.TimeZoneID, TimeZoneGiven: rec.TimeZoneIDGiven,
		Roles: rec.Roles, Version: rec.Version, UpdatedOn: rec.UpdatedOn.UTC().Format(time.RFC3339Nano)}
}

type afterPos struct {
	After string `json:"after"`
}

// after decodes the page's cursor (bound to query) into the position to read after.
func after[Req any](in *httpapi.In[Req], query string) (string, error) {
	var p afterPos
	err := in.After(query, &p)
	return p.After, err
}

// nextPos is the position after a page of n items ending at last: none (the last page)
// when the page is not full.
func nextPos(last string, n, limit int) afterPos {
	if n < limit {
		return afterPos{}
	}
	return afterPos{After: last}
}

func (h handlers) listBusinessUnits(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[BusinessUnit], error) {
	pos, err := after(in, "business-units")
	if err != nil {
		return httpapi.Page[BusinessUnit]{}, err
	}
	recs, err := h.admin.Units().List(ctx, scopeOf(ctx), pos, in.Limit)
	if err != nil {
		return httpapi.Page[BusinessUnit]{}, err
	}
	items := make([]BusinessUnit, 0, len(recs))
	var next afterPos
	for _, rec := range recs {
		items = append(items, buView(rec))
		next = nextPos(rec.ID, len(recs), in.Limit)
	}
	return httpapi.NewPage(items, "business-units", next)
}

func (h handlers) createBusinessUnit(ctx context.Context, in *httpapi.In[businessunit.Input]) (BusinessUnit, error) {
	in.Body.UpdatedBy = httpapi.CallerFrom(ctx).Operator
	rec, err := h.admin.Units().Create(ctx, scopeOf(ctx), in.Body)
	if err != nil {
		return BusinessUnit{}, err
	}
	in.Header.Set("Location", "/api/business-units/"+url.PathEscape(rec.ID)) // ids may hold a slash
	return buView(rec), nil
}

// --- reminder settings ---------------------------------------------------------------

// settingView is the setting resource: the setting's own fields (reminder.Setting's JSON,
// isActive always present) plus version, updatedOn and, after a write, propagation.
func settingView(res reminder.SettingResult) (json.RawMessage, error) {
	set := res.Setting
	active := set.Active()
	set.IsActive = &active
	b, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["version"], _ = json.Marshal(res.Version)
	m["updatedOn"], _ = json.Marshal(res.UpdatedOn.UTC().Format(time.RFC3339Nano))
	if res.Propagation != nil {
		m["propagation"], _ = json.Marshal(res.Propagation)
	}
	if len(res.Warnings) > 0 {
		m["warnings"], _ = json.Marshal(res.Warnings)
	}
	return json.Marshal(m)
}

// setting is the setting resource as answered (settingView) and its version for the ETag.
type setting struct {
	body    json.RawMessage
	version int64
}

// MarshalJSON writes the view.
func (s setting) MarshalJSON() ([]byte, error) { return s.body, nil }

// settingOf makes the answer of a service call that returned res or err.
func settingOf(res reminder.SettingResult, err error) (setting, error) {
	if err != nil {
		return setting{}, err
	}
	body, err := settingView(res)
	return setting{body: body, version: res.Version}, err
}

func (h handlers) listSettings(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[setting], error) {
	q := in.Query
	active, err := q.Bool("active")
	if err != nil {
		return httpapi.Page[setting]{}, err
	}
	f := reminder.SettingFilter{BusinessUnitID: q.String("businessUnitId"), SourceType: q.String("sourceType"), Active: active}
	query := "reminder-settings?bu=" + f.BusinessUnitID + "&type=" + f.SourceType + "&active=" + q.String("active")
	pos, err := after(in, query)
	if err != nil {
		return httpapi.Page[setting]{}, err
	}
	list, err := h.admin.ListSettings(ctx, scopeOf(ctx), f, pos, in.Limit)
	if err != nil {
		return httpapi.Page[setting]{}, err
	}
	items := make([]setting, 0, len(list))
	var next afterPos
	for _, res := range list {
		v, err := settingOf(res, nil)
		if err != nil {
			return httpapi.Page[setting]{}, err
		}
		items = append(items, v)
		next = nextPos(res.Setting.Guid, len(list), in.Limit)
	}
	return httpapi.NewPage(items, query, next)
}

// readOnlyFields are answer-only fields a client may send back unchanged after a GET; they
// are ignored on writes (the version to replace is If-Match's).
var readOnlyFields = []string{"version", "updatedOn", "propagation"}

// settingBody is a setting as a client writes it: one JSON object.
type settingBody map[string]json.RawMessage

// raw is the body without the read-only fields.
func (m settingBody) raw() (json.RawMessage, error) {
	if m == nil {
		return nil, &automation.Error{Code: automation.CodeMalformed, Message: "the body must be one JSON object (a reminder setting)"}
	}
	for _, f := range readOnlyFields {
		delete(m, f)
	}
	return json.Marshal(m)
}

func (h handlers) createSetting(ctx context.Context, in *httpapi.In[settingBody]) (setting, error) {
	raw, err := in.Body.raw()
	if err != nil {
		return setting{}, err
	}
	guid, ok := httpapi.DeterministicID(ctx, "reminder-setting")
	if !ok {
		guid = uuid.NewString()
	}
	body, err := reminder.WithGuid(raw, guid)
	if err != nil {
		return setting{}, err
	}
	res, err := h.admin.CreateSettingBy(ctx, scopeOf(ctx), body, httpapi.CallerFrom(ctx).Operator)
	if err != nil {
		return setting{}, err
	}
	in.Header.Set("Location", "/api/reminder-settings/"+res.Setting.Guid)
	return settingOf(res, nil)
}

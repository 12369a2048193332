// Package settingsapi is the management HTTP API for business units and reminder settings
// (docs/architecture.md#inputs, docs/architecture.md#settings-changes; functions BusinessUnitsApi and ReminderSettingsApi). It is a
// thin adapter: decode the request, call one reminder.Admin method, answer JSON. The
// conventions come from shared/httpapi: RFC 9457 problem details, strict JSON and query
// strings, ETag/If-Match on Version, Idempotency-Key on POST, business-unit scope (a unit or
// setting outside the caller's scope answers 404), opaque cursors. openapi.yaml describes
// every route; a test checks it against the registered routes and validates real requests
// and responses against it.
//
//	GET  /api/business-units                      list (limit, cursor)
//	POST /api/business-units                      create (Idempotency-Key)
//	GET  /api/business-units/{id}                 read (ETag)
//	PUT  /api/business-units/{id}                 replace (If-Match required)
//	GET  /api/reminder-settings                   list (businessUnitId, sourceType, active, limit, cursor)
//	POST /api/reminder-settings                   create (Idempotency-Key; guid optional)
//	GET  /api/reminder-settings/{guid}            read (ETag)
//	PUT  /api/reminder-settings/{guid}            replace (If-Match required; docs/architecture.md#settings-changes rules)
//	POST /api/reminder-settings/{guid}/deactivate deactivate (If-Match required)
package settingsapi

import (
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
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

// Route is one registered route.
type Route struct {
	Method string
	Path   string // ServeMux path pattern, e.g. /api/reminder-settings/{guid}
}

// Routes lists every route Register adds.
var Routes = []Route{
	{http.MethodGet, "/api/business-units"},
	{http.MethodPost, "/api/business-units"},
	{http.MethodGet, "/api/business-units/{id}"},
	{http.MethodPut, "/api/business-units/{id}"},
	{http.MethodGet, "/api/reminder-settings"},
	{http.MethodPost, "/api/reminder-settings"},
	{http.MethodGet, "/api/reminder-settings/{guid}"},
	{http.MethodPut, "/api/reminder-settings/{guid}"},
	{http.MethodPost, "/api/reminder-settings/{guid}/deactivate"},
}

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
	h := handlers{admin: admin}
	funcs := map[Route]httpapi.HandlerFunc{
		Routes[0]: h.listBusinessUnits, Routes[1]: h.createBusinessUnit, Routes[2]: h.getBusinessUnit, Routes[3]: h.putBusinessUnit,
		Routes[4]: h.listSettings, Routes[5]: h.createSetting, Routes[6]: h.getSetting, Routes[7]: h.putSetting, Routes[8]: h.deactivateSetting,
	}
	for _, rt := range Routes {
		r.RegisterHTTP(rt.Method+" "+rt.Path, api.Handler(funcs[rt]))
	}
}

func scopeOf(r *http.Request) automation.Scope {
	return httpapi.CallerFrom(r.Context()).Scope
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

func pageParams(q httpapi.Query, query string) (after string, limit int, err error) {
	limit, err = q.Int("limit", DefaultLimit, 1, MaxLimit)
	if err != nil {
		return "", 0, err
	}
	if c := q.String("cursor"); c != "" {
		var p afterPos
		if err := httpapi.DecodeCursor(c, query, &p); err != nil {
			return "", 0, err
		}
		after = p.After
	}
	return after, limit, nil
}

// nextPos is the position after a page of n items ending at last: none (the last page)
// when the page is not full.
func nextPos(last string, n, limit int) afterPos {
	if n < limit {
		return afterPos{}
	}
	return afterPos{After: last}
}

func (h handlers) listBusinessUnits(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("limit", "cursor"); err != nil {
		return err
	}
	after, limit, err := pageParams(q, "business-units")
	if err != nil {
		return err
	}
	recs, err := h.admin.Units().List(r.Context(), scopeOf(r), after, limit)
	if err != nil {
		return err
	}
	items := make([]BusinessUnit, 0, len(recs))
	var next afterPos
	for _, rec := range recs {
		items = append(items, buView(rec))
		next = nextPos(rec.ID, len(recs), limit)
	}
	page, err := httpapi.NewPage(items, "business-units", next)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h handlers) createBusinessUnit(w http.ResponseWriter, r *http.Request) error {
	var in businessunit.Input
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	rec, err := h.admin.Units().Create(r.Context(), scopeOf(r), in)
	if err != nil {
		return err
	}
	httpapi.SetETag(w, rec.Version)
	w.Header().Set("Location", "/api/business-units/"+url.PathEscape(rec.ID)) // ids may hold a slash
	httpapi.WriteJSON(w, http.StatusCreated, buView(rec))
	return nil
}

func (h handlers) getBusinessUnit(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
		return err
	}
	rec, err := h.admin.Units().Get(r.Context(), scopeOf(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.SetETag(w, rec.Version)
	httpapi.WriteJSON(w, http.StatusOK, buView(rec))
	return nil
}

func (h handlers) putBusinessUnit(w http.ResponseWriter, r *http.Request) error {
	v, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	var in businessunit.Input
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	rec, prop, err := h.admin.UpdateBusinessUnit(r.Context(), scopeOf(r), r.PathValue("id"), in, v)
	if err != nil {
		return err
	}
	view := buView(rec)
	view.Propagation = &prop
	httpapi.SetETag(w, rec.Version)
	httpapi.WriteJSON(w, http.StatusOK, view)
	return nil
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

func writeSetting(w http.ResponseWriter, status int, res reminder.SettingResult) error {
	body, err := settingView(res)
	if err != nil {
		return err
	}
	httpapi.SetETag(w, res.Version)
	httpapi.WriteJSON(w, status, body)
	return nil
}

func (h handlers) listSettings(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId", "sourceType", "active", "limit", "cursor"); err != nil {
		return err
	}
	active, err := q.Bool("active")
	if err != nil {
		return err
	}
	f := reminder.SettingFilter{BusinessUnitID: q.String("businessUnitId"), SourceType: q.String("sourceType"), Active: active}
	query := "reminder-settings?bu=" + f.BusinessUnitID + "&type=" + f.SourceType + "&active=" + q.String("active")
	after, limit, err := pageParams(q, query)
	if err != nil {
		return err
	}
	list, err := h.admin.ListSettings(r.Context(), scopeOf(r), f, after, limit)
	if err != nil {
		return err
	}
	items := make([]json.RawMessage, 0, len(list))
	var next afterPos
	for _, res := range list {
		v, err := settingView(res)
		if err != nil {
			return err
		}
		items = append(items, v)
		next = nextPos(res.Setting.Guid, len(list), limit)
	}
	page, err := httpapi.NewPage(items, query, next)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

// readOnlyFields are answer-only fields a client may send back unchanged after a GET; they
// are ignored on writes (the version to replace is If-Match's).
var readOnlyFields = []string{"version", "updatedOn", "propagation"}

// decodeSettingBody reads a setting body and drops the read-only fields.
func decodeSettingBody(r *http.Request) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := httpapi.DecodeJSON(r, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, &automation.Error{Code: automation.CodeMalformed, Message: "the body must be one JSON object (a reminder setting)"}
	}
	for _, f := range readOnlyFields {
		delete(m, f)
	}
	return json.Marshal(m)
}

func (h handlers) createSetting(w http.ResponseWriter, r *http.Request) error {
	raw, err := decodeSettingBody(r)
	if err != nil {
		return err
	}
	guid, ok := httpapi.DeterministicID(r.Context(), "reminder-setting")
	if !ok {
		guid = uuid.NewString()
	}
	body, err := reminder.WithGuid(raw, guid)
	if err != nil {
		return err
	}
	res, err := h.admin.CreateSetting(r.Context(), scopeOf(r), body)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/reminder-settings/"+res.Setting.Guid)
	return writeSetting(w, http.StatusCreated, res)
}

func (h handlers) getSetting(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
		return err
	}
	res, err := h.admin.GetSetting(r.Context(), scopeOf(r), r.PathValue("guid"))
	if err != nil {
		return err
	}
	return writeSetting(w, http.StatusOK, res)
}

func (h handlers) putSetting(w http.ResponseWriter, r *http.Request) error {
	v, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	raw, err := decodeSettingBody(r)
	if err != nil {
		return err
	}
	res, err := h.admin.UpdateSetting(r.Context(), scopeOf(r), r.PathValue("guid"), raw, v)
	if err != nil {
		return err
	}
	return writeSetting(w, http.StatusOK, res)
}

func (h handlers) deactivateSetting(w http.ResponseWriter, r *http.Request) error {
	v, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	var empty struct{} // an optional body, "{}"; chunked too, whatever Content-Length says
	if err := httpapi.DecodeOptionalJSON(r, &empty); err != nil {
		return err
	}
	res, err := h.admin.DeactivateSetting(r.Context(), scopeOf(r), r.PathValue("guid"), v)
	if err != nil {
		return err
	}
	return writeSetting(w, http.StatusOK, res)
}

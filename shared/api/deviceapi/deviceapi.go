package deviceapi

import (
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

// Route patterns (the DevicesApi function's route devices/{*path}).
const (
	PathDevice  = "/api/devices/{customerId}/{token}"
	PathDevices = "/api/devices/{customerId}"
)

// MaxAppLength bounds the app id of a registration.
const MaxAppLength = 200

// Deps are what the routes use.
type Deps struct {
	Store store.PushDeviceStore
	// Units, when set, is where a business unit is looked up: one that does not exist
	// answers 404 (as one outside the caller's scope). nil: not checked.
	Units businessunit.Reader
	Clock automation.Clock
}

// Register adds the device routes to reg.
func Register(reg Registrar, api *httpapi.API, d Deps) {
	if d.Clock == nil {
		d.Clock = automation.SystemClock{}
	}
	h := handlers{d: d}
	reg.RegisterHTTP("PUT "+PathDevice, api.Handler(h.put))
	reg.RegisterHTTP("DELETE "+PathDevice, api.Handler(h.delete))
	reg.RegisterHTTP("GET "+PathDevices, api.Handler(h.list))
}

type handlers struct{ d Deps }

// Device is a registration as the API shows it.
type Device struct {
	BusinessUnitID string    `json:"businessUnitId"`
	CustomerID     string    `json:"customerId"`
	Token          string    `json:"token"`
	Platform       string    `json:"platform"`
	App            string    `json:"app"`
	RegisteredOn   time.Time `json:"registeredOn"`
	UpdatedOn      time.Time `json:"updatedOn"`
	Version        int64     `json:"version"`
}

func view(d store.PushDevice) Device {
	return Device{BusinessUnitID: d.BusinessUnitID, CustomerID: d.CustomerID, Token: d.Token, Platform: string(d.Platform), App: d.App,
		RegisteredOn: d.RegisteredOn, UpdatedOn: d.UpdatedOn, Version: d.Version}
}

// Registration is the PUT body.
type Registration struct {
	Platform string `json:"platform"`
	App      string `json:"app"`
}

// scoped checks the businessUnitId parameter: required, in the caller's scope and stored
// (404 otherwise).
func (h handlers) scoped(r *http.Request, q httpapi.Query) (string, error) {
	bu := q.String("businessUnitId")
	if err := httpapi.RequireUnit(r, bu); err != nil {
		return "", err
	}
	if h.d.Units != nil {
		if _, err := h.d.Units.BusinessUnitGet(r.Context(), bu); errors.Is(err, store.ErrNotFound) {
			return "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
		} else if err != nil {
			return "", err
		}
	}
	return bu, nil
}

// path reads and checks {customerId} (and {token} when withToken).
func path(r *http.Request, withToken bool) (customer, token string, err error) {
	customer = r.PathValue("customerId")
	var errs []error
	if err := channel.ValidateCustomerID(customer); err != nil {
		errs = append(errs, automation.Invalid("customerId", "%v", err))
	}
	if withToken {
		token = r.PathValue("token")
		if err := channel.ValidatePushToken(token); err != nil {
			errs = append(errs, automation.Invalid("token", "%v", err))
		}
	}
	return customer, token, automation.InvalidFields(errs...)
}

func (h handlers) put(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId"); err != nil {
		return err
	}
	bu, err := h.scoped(r, q)
	if err != nil {
		return err
	}
	var body Registration
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	customer, token, perr := path(r, true)
	var errs []error
	if perr != nil {
		errs = append(errs, perr)
	}
	if !store.PushPlatform(body.Platform).Valid() {
		errs = append(errs, automation.Invalid("platform", "unknown platform %q: one of android, ios, web", body.Platform))
	}
	if body.App == "" || utf8.RuneCountInString(body.App) > MaxAppLength || strings.ContainsFunc(body.App, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		errs = append(errs, automation.Invalid("app", "the app id is required: 1..%d characters without control characters", MaxAppLength))
	}
	if err := automation.InvalidFields(errs...); err != nil {
		return err
	}
	res, err := h.d.Store.PushDeviceRegister(r.Context(), store.PushDeviceRegisterParams{BusinessUnitID: bu, CustomerID: customer, Token: token,
		Platform: store.PushPlatform(body.Platform), App: body.App, Now: h.d.Clock.Now().UTC()})
	if errors.Is(err, store.ErrConflict) {
		return automation.Errorf(automation.CodeConflict, "customer %q has %d active devices, the most allowed: delete one first", customer, store.MaxPushDevicesPerCustomer)
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, view(res.Device))
	return nil
}

func (h handlers) delete(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId"); err != nil {
		return err
	}
	bu, err := h.scoped(r, q)
	if err != nil {
		return err
	}
	customer, token, err := path(r, true)
	if err != nil {
		return err
	}
	_, err = h.d.Store.PushDeviceRetire(r.Context(), store.PushDeviceRetireParams{BusinessUnitID: bu, CustomerID: customer, Token: token,
		Reason: "deleted", Now: h.d.Clock.Now().UTC()})
	if errors.Is(err, store.ErrNotFound) {
		return automation.Errorf(automation.CodeNotFound, "no active device with this token for customer %q", customer)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Page is the list answer.
type Page struct {
	Items []Device `json:"items"`
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId"); err != nil {
		return err
	}
	bu, err := h.scoped(r, q)
	if err != nil {
		return err
	}
	customer, _, err := path(r, false)
	if err != nil {
		return err
	}
	ds, err := h.d.Store.PushDeviceList(r.Context(), bu, customer)
	if err != nil {
		return err
	}
	out := Page{Items: make([]Device, 0, len(ds))}
	for _, d := range ds {
		out.Items = append(out.Items, view(d))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

package deviceapi

import (
	"context"
	_ "embed" // openapi.yaml
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

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML); a test checks it against
// the router in both directions and validates real calls with it.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

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
func Register(reg httpapi.Registrar, api *httpapi.API, d Deps) {
	httpapi.Mount(reg, api, Routes(d)...)
}

// Routes declares the device routes over d (Deps{}: the declarations only, for checks).
// Each reads ?businessUnitId= (required, in scope, stored: unitStored) and nothing else.
func Routes(d Deps) []httpapi.Route {
	if d.Clock == nil {
		d.Clock = automation.SystemClock{}
	}
	h := handlers{d: d}
	return []httpapi.Route{
		httpapi.Endpoint[Registration, Device]{Method: "PUT", Path: PathDevice, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			Body: httpapi.BodyRequired, Also: []int{http.StatusCreated}, Call: h.put},
		httpapi.Endpoint[struct{}, struct{}]{Method: "DELETE", Path: PathDevice, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			Status: http.StatusNoContent, Call: h.delete},
		httpapi.Endpoint[struct{}, Page]{Method: "GET", Path: PathDevices, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored, Call: h.list},
	}
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

// unitStored answers 404 for a business unit that is not stored (as for one outside the
// caller's scope) when Deps.Units is set.
func (h handlers) unitStored(ctx context.Context, bu string) error {
	return httpapi.UnitStored(ctx, h.d.Units, bu)
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

// put registers a device: 201 when it becomes active, 200 when it was.
func (h handlers) put(ctx context.Context, in *httpapi.In[Registration]) (Device, error) {
	body := in.Body
	customer, token, perr := path(in.Request, true)
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
		return Device{}, err
	}
	res, err := h.d.Store.PushDeviceRegister(ctx, store.PushDeviceRegisterParams{BusinessUnitID: in.Unit, CustomerID: customer, Token: token,
		Platform: store.PushPlatform(body.Platform), App: body.App, Now: h.d.Clock.Now().UTC()})
	if errors.Is(err, store.ErrConflict) {
		return Device{}, automation.Errorf(automation.CodeConflict, "customer %q has %d active devices, the most allowed: delete one first", customer, store.MaxPushDevicesPerCustomer)
	}
	if err != nil {
		return Device{}, err
	}
	if res.Created {
		in.Status = http.StatusCreated
	}
	return view(res.Device), nil
}

// delete retires a device (204).
func (h handlers) delete(ctx context.Context, in *httpapi.In[struct{}]) (struct{}, error) {
	customer, token, err := path(in.Request, true)
	if err != nil {
		return struct{}{}, err
	}
	_, err = h.d.Store.PushDeviceRetire(ctx, store.PushDeviceRetireParams{BusinessUnitID: in.Unit, CustomerID: customer, Token: token,
		Reason: "deleted", Now: h.d.Clock.Now().UTC()})
	if errors.Is(err, store.ErrNotFound) {
		return struct{}{}, automation.Errorf(automation.CodeNotFound, "no active device with this token for customer %q", customer)
	}
	return struct{}{}, err
}

// Page is the list answer.
type Page struct {
	Items []Device `json:"items"`
}

func (h handlers) list(ctx context.Context, in *httpapi.In[struct{}]) (Page, error) {
	customer, _, err := path(in.Request, false)
	if err != nil {
		return Page{}, err
	}
	ds, err := h.d.Store.PushDeviceList(ctx, in.Unit, customer)
	if err != nil {
		return Page{}, err
	}
	out := Page{Items: make([]Device, 0, len(ds))}
	for _, d := range ds {
		out.Items = append(out.Items, view(d))
	}
	return out, nil
}

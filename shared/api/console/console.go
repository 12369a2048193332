package console

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/report"
	srvsession "github.com/automation-platform/automation/shared/session"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

// FunctionName is the HTTP function (folder functions/Console) that forwards the console's
// routes in Azure.
const FunctionName = "Console"

// Base is the path every console route starts with. The Functions host serves HTTP functions
// below its route prefix ("api"), so the console is /api/console/ in Azure and in serve alike;
// serve also redirects /console there.
const Base = "/api/console"

// DefaultSessionLifetime is how long a sign-in lasts.
const DefaultSessionLifetime = 8 * time.Hour

// maxFormBytes bounds a console form's body.
const maxFormBytes = 64 << 10

//go:embed templates/*.html static/*
var assets embed.FS

// Deps are the services the console reads and acts through. Support is required; a nil
// Deliveries or Reports leaves its page out.
type Deps struct {
	Support    *support.Service
	Deliveries *delivery.Support
	Reports    *report.Service
	// Units lists the business units for the pickers (units.go); nil: the pickers are text
	// boxes.
	Units UnitLister
}

// Options tune the console.
type Options struct {
	// WithoutToken serves the console when the API has no bearer token: local serve on
	// 127.0.0.1, where the APIs are open as well. Without it (the Functions app), a console
	// whose API has no token answers 503: it never runs unauthenticated where the Functions
	// host's keys guard the APIs.
	WithoutToken bool
	// SessionLifetime is how long a sign-in lasts (default DefaultSessionLifetime).
	SessionLifetime time.Duration
	// Pages are more pages, added to the navigation after the built-in ones.
	Pages []Page
	// Logger receives 5xx details (default slog.Default()).
	Logger *slog.Logger
	// OIDC signs people in with the authorization-code flow and PKCE beside the token form
	// (docs/console.md#sign-in); nil: the token form only.
	OIDC OIDCSignIn
	// RoleOf is the role a route (its ServeMux pattern) needs; a person's session (OIDC) may
	// use a route only with that role, a route without one not at all. The bootstrap token
	// is an admin.
	RoleOf func(pattern string) (httpapi.Role, bool)
}

// Page is a console page another package adds (the extension point for the gateway registry
// and event metrics, attribute lookup, campaigns, budgets and the UNKNOWN fee queue as they
// land): GET {Base}/{Path} renders Render's section inside the console's layout, behind the
// same sign-in and business-unit scope; POST {Base}/{Path} (when Post is set) gets the same
// sign-in and CSRF check as the built-in forms, the form already parsed (r.PostForm). Both
// return trusted HTML (from the page's own html/template) or an error answered like the
// built-in pages' (404 outside the scope, 412 for a stale version, …).
type Page struct {
	Path   string // one path segment, e.g. "gateway"
	Title  string // the navigation entry
	Render func(r *http.Request, pc PageCall) (template.HTML, error)
	Post   func(r *http.Request, pc PageCall) (template.HTML, error) // optional
	// Hidden leaves the page out of the navigation (a form's target with a role of its own,
	// reached from another page's links).
	Hidden bool
}

// PageCall is what a Page's functions know of the request: who calls, and the hidden CSRF
// field every form of theirs must carry (empty for a bearer-header caller, who needs none).
type PageCall struct {
	Caller    httpapi.Caller
	CSRFField template.HTML
	units     UnitLister // UnitSelect's
}

// Refused is a Page's answer to a form the service refused: the page (Body, with its own
// message, role="alert") shown again with the refusal's status (Status: 409, 412, 422, …)
// instead of 200, so a stale version reads as one in the browser and in tests.
type Refused struct {
	Status int
	Body   template.HTML
}

func (r *Refused) Error() string { return fmt.Sprintf("console: refused with %d", r.Status) }

// Console serves the pages. Safe for concurrent use.
type Console struct {
	api      *httpapi.API
	deps     Deps
	opts     Options
	sess     sessions
	pages    map[string]*template.Template
	css      template.CSS
	nav      []navItem
	disabled bool
}

type navItem struct{ Path, Title string }

// Register adds the console's routes to r. The routes authenticate with the API's bearer
// token — the Authorization header (scripts, tests) or a session cookie the sign-in form
// issues — and see the API's business units (X-Automation-Business-Units narrows them).
func Register(r *funchost.Router, api *httpapi.API, deps Deps, opts Options) *Console {
	c := New(api, deps, opts)
	route := func(pattern string, h handlerFunc) { r.RegisterHTTP(pattern, c.wrap(pattern, h)) }
	route("GET "+Base+"/", c.overview)
	route("GET "+Base+"/static/{file}", c.static)
	route("POST "+Base+"/login", c.login)
	route("GET "+Base+"/oidc/start", c.oidcStart)
	route("GET "+Base+"/oidc/callback", c.oidcCallback)
	route("POST "+Base+"/logout", c.logout)
	route("GET "+Base+"/rows", c.rows)
	route("GET "+Base+"/rows/{id}", c.row)
	route("POST "+Base+"/rows/{id}/{action}", c.act)
	route("GET "+Base+"/releases", c.releaseForm)
	route("POST "+Base+"/releases", c.release)
	route("GET "+Base+"/releases/watch", c.watch)
	if deps.Deliveries != nil {
		route("GET "+Base+"/unknown", c.unknown)
		route("POST "+Base+"/unknown/{deliveryKey}/resolve", c.resolve)
	}
	if deps.Reports != nil {
		route("GET "+Base+"/reports", c.reports)
	}
	for _, p := range opts.Pages {
		route("GET "+Base+"/"+p.Path, c.extension(p, p.Render))
		if p.Post != nil {
			route("POST "+Base+"/"+p.Path, c.extension(p, p.Post))
		}
	}
	return c
}

// New builds a console without registering it (tests render through Handler).
func New(api *httpapi.API, deps Deps, opts Options) *Console {
	if opts.SessionLifetime <= 0 {
		opts.SessionLifetime = DefaultSessionLifetime
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &Console{api: api, deps: deps, opts: opts}
	c.sess = sessions{key: api.SessionKey("automation console session v1"), lifetime: opts.SessionLifetime}
	if c.sess.key == nil {
		// No token: one process's random key (serve on loopback); the Functions app refuses.
		c.sess.key = []byte(uuid.NewString() + uuid.NewString())
		c.disabled = !opts.WithoutToken
	}
	css, err := assets.ReadFile("static/console.css")
	if err != nil {
		panic(err)
	}
	c.css = template.CSS(css)
	c.nav = []navItem{{"/", "Overview"}, {"/rows", "Rows"}, {"/releases", "Paced release"}}
	if deps.Deliveries != nil {
		c.nav = append(c.nav, navItem{"/unknown", "UNKNOWN deliveries"})
	}
	if deps.Reports != nil {
		c.nav = append(c.nav, navItem{"/reports", "Reports"})
	}
	for _, p := range opts.Pages {
		if strings.Contains(p.Path, "/") || p.Path == "" || p.Render == nil {
			panic(fmt.Sprintf("console: page %q needs one path segment and a Render", p.Path))
		}
		if !p.Hidden {
			c.nav = append(c.nav, navItem{"/" + p.Path, p.Title})
		}
	}
	c.pages = parsePages()
	return c
}

// handlerFunc is a page handler: it renders its answer through c.render and returns errors
// for the error page.
type handlerFunc func(w http.ResponseWriter, r *http.Request, x *call) error

// call is one authenticated request.
type call struct {
	caller   httpapi.Caller
	sess     session
	csrf     string
	bearer   bool // authenticated by the Authorization header (no cookie, no CSRF token)
	signedIn bool
}

// wrap authenticates, scopes and checks CSRF; see docs/console.md#sign-in.
func (c *Console) wrap(pattern string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(funchost.InvocationIDHeader)
		if id == "" {
			id = "req-" + uuid.NewString()
		}
		r = r.WithContext(logctx.With(r.Context(), logctx.Function, FunctionName, logctx.InvocationID, id))
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "same-origin")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		if c.disabled {
			c.fail(w, r, nil, http.StatusServiceUnavailable, "The console is switched off",
				"No API token is configured (AUTOMATION_API_TOKEN). The console signs in with that token; set it to use the console here.")
			return
		}
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			c.fail(w, r, nil, http.StatusBadRequest, "Malformed address", "the query string is malformed")
			return
		}
		x := &call{caller: c.api.Caller(r)}
		now := c.api.Clock().Now()
		ok, present := c.api.Bearer(r)
		switch {
		case present && !ok:
			c.signIn(w, r, http.StatusUnauthorized, "The Authorization header's token is not the API token.")
			return
		case ok:
			x.bearer = true
		default:
			if ck, err := r.Cookie(CookieName); err == nil {
				x.sess, x.signedIn = c.sess.verify(ck.Value, now)
			}
			// The sign-in routes are open: the token form, and the OIDC flow's when configured.
			isLogin := r.URL.Path == Base+"/login" || (c.opts.OIDC != nil && (r.URL.Path == Base+"/oidc/start" || r.URL.Path == Base+"/oidc/callback"))
			if !x.signedIn && !c.api.TokenRequired() {
				// No token to sign in with (serve without -token): a session still carries
				// the CSRF token; it is issued on a GET, never on a POST.
				if r.Method == http.MethodGet || isLogin {
					var v string
					x.sess, v = c.sess.issue(now)
					http.SetCookie(w, cookie(r, v))
					x.signedIn = true
				}
			}
			if p, ok := srvsession.PrincipalFrom(r.Context()); ok && x.signedIn {
				// The session guard re-checked what this session signed in with (the API key
				// as it stands, the person's claims under today's mapping): that principal
				// counts, not the one the cookie recorded at sign-in.
				x.sess.principal = &p
			}
			if !x.signedIn && !isLogin {
				msg := "Sign in with the API token or an API key."
				if r.Method == http.MethodPost {
					msg = "Your session ended, so nothing was done. Sign in and try again."
				}
				c.signIn(w, r, http.StatusUnauthorized, msg)
				return
			}
			x.csrf = c.sess.csrf(x.sess)
			if p := x.sess.principal; x.signedIn && p != nil && !isLogin {
				// A person's session (OIDC): their units and name, and the route's role.
				x.caller = c.api.CallerAs(r, *p)
				if need, ok := c.allowed(pattern, *p); !ok {
					detail := "No role is declared for this page."
					if need != "" {
						detail = p.Name + " lacks the role " + string(need) + " this page needs. Nothing was done."
					}
					c.fail(w, r, x, http.StatusForbidden, "Not allowed", detail)
					return
				}
			}
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				c.fail(w, r, x, http.StatusBadRequest, "Unreadable form", "the form could not be read (at most 64 KiB, application/x-www-form-urlencoded)")
				return
			}
			// The sign-in form is guarded by the token it carries (and the cross-site check),
			// not by a session's CSRF token: signing in again from a stale page must work.
			isLogin := r.URL.Path == Base+"/login"
			if !x.bearer && (crossSite(r) || (x.signedIn && !isLogin && !c.sess.checkCSRF(x.sess, r.PostForm.Get(csrfField)))) {
				c.fail(w, r, x, http.StatusForbidden, "Refused: the form did not come from this console",
					"The request came from another site, or its form is from an earlier session. Nothing was done. Reload the page and try again.")
				return
			}
			if err := formText(r.PostForm); err != nil {
				c.fail(w, r, x, 0, "", "", err)
				return
			}
		}
		if err := h(w, r, x); err != nil {
			c.fail(w, r, x, 0, "", "", err)
		}
	})
}

// pageData is what every page template gets.
type pageData struct {
	Title    string
	Base     string
	Nav      []navItem
	Current  string
	CSRF     string
	SignedIn bool // a cookie session (offer to sign out)
	Operator string
	Person   string // who an OIDC session signed in ("" for the bootstrap token)
	CSS      template.CSS
	Status   int
	Error    *problem
	Notice   string
	Data     any
	// Units are the business units the caller sees, for the pages' pickers ("picker");
	// UnitsMore: more than MaxPickerUnits, or none could be listed (a text box then).
	Units     []unitOption
	UnitsMore bool
	// Refresh: the page reloads itself (?refresh=on, a page that offers it: the overview, a
	// paced release's watch). Off unless asked for: a page that moves under a person's eyes
	// is a barrier (WCAG 2.2.1, axe-core's meta-refresh). RefreshLink toggles it.
	Refresh     bool
	RefreshLink string
}

// problem is an error as a page shows it.
type problem struct {
	Status int
	Title  string
	Detail string
	Fields []httpapi.FieldError
}

// pageProblem is pr as a page shows it: the title, the detail and the members refused.
// A detail that only repeats a member's message is dropped, so a 422 reads
// "operator: is required" once, not "is required" and then "operator: is required".
func pageProblem(pr httpapi.Problem) *problem {
	p := &problem{Status: pr.Status, Title: pr.Title, Detail: pr.Detail, Fields: pr.Errors}
	for _, f := range p.Fields {
		if d := strings.TrimSpace(p.Detail); d == strings.TrimSpace(f.Message) || d == f.Field+": "+strings.TrimSpace(f.Message) {
			p.Detail = ""
			break
		}
	}
	return p
}

func (c *Console) data(r *http.Request, x *call, title string, d any) *pageData {
	p := &pageData{Title: title, Base: Base, Nav: c.nav, Current: strings.TrimPrefix(r.URL.Path, Base), CSS: c.css, Data: d}
	q := r.URL.Query()
	p.Refresh = q.Get("refresh") == "on"
	if p.Refresh {
		q.Del("refresh")
	} else {
		q.Set("refresh", "on")
	}
	p.RefreshLink = r.URL.Path
	if len(q) > 0 {
		p.RefreshLink += "?" + q.Encode()
	}
	if x != nil {
		p.CSRF, p.SignedIn, p.Operator = x.csrf, !x.bearer && x.signedIn && c.api.TokenRequired(), x.caller.Operator
		if x.sess.principal != nil {
			p.Person = x.sess.principal.Name
		}
		units, more, err := pickerUnits(r.Context(), c.deps.Units, x.caller.Scope)
		if err != nil {
			c.opts.Logger.ErrorContext(r.Context(), "console: business units not listed for the pickers", "error", err)
			more = true
		}
		p.Units, p.UnitsMore = units, more
	}
	return p
}

// render writes page name with status.
func (c *Console) render(w http.ResponseWriter, status int, name string, p *pageData) {
	t, ok := c.pages[name]
	if !ok {
		panic("console: no template " + name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		c.opts.Logger.Error("console: template failed", "template", name, "error", err)
		http.Error(w, "the page could not be rendered; it was logged", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders the error page: from err (its status and safe detail, httpapi.ProblemOf) or
// from the status, title and detail given.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, x *call, status int, title, detail string, errs ...error) {
	p := problemFor(status, title, detail, errs...)
	if p.Status >= 500 && len(errs) > 0 {
		c.opts.Logger.ErrorContext(r.Context(), "console request failed", "path", r.URL.Path, "error", errs[0])
	}
	d := c.data(r, x, p.Title, nil)
	d.Error, d.Status = p, p.Status
	c.render(w, p.Status, "error", d)
}

func problemFor(status int, title, detail string, errs ...error) *problem {
	if len(errs) > 0 && errs[0] != nil {
		return pageProblem(httpapi.ProblemOf(errs[0]))
	}
	return &problem{Status: status, Title: title, Detail: detail}
}

// signIn answers with the sign-in form (a 401 page: the form is the way to authenticate).
func (c *Console) signIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	next := r.URL.Path
	if r.Method == http.MethodGet && r.URL.RawQuery != "" {
		next += "?" + r.URL.RawQuery
	}
	if r.Method != http.MethodGet || !strings.HasPrefix(next, Base+"/") || next == Base+"/login" {
		next = Base + "/"
	}
	m := map[string]string{"Next": next, "Message": msg}
	if c.opts.OIDC != nil {
		m["Issuer"] = c.opts.OIDC.Issuer()
	}
	d := c.data(r, nil, "Sign in", m)
	d.Status = status
	w.Header().Set("WWW-Authenticate", `Bearer realm="automation console"`)
	c.render(w, status, "login", d)
}

// login checks the token of the sign-in form (or the Authorization header) and sets the
// session cookie; wrong tokens answer the form again with 401.
func (c *Console) login(w http.ResponseWriter, r *http.Request, x *call) error {
	if crossSite(r) {
		return automation.Errorf(automation.CodeUnauthorized, "a sign-in from another site is refused")
	}
	now := c.api.Clock().Now()
	if !c.api.TokenRequired() || x.bearer || c.api.CheckToken(r.PostForm.Get("token")) {
		_, v := c.sess.issue(now)
		http.SetCookie(w, cookie(r, v))
		seeOther(w, r, safeNext(r.PostForm.Get("next")))
		return nil
	}
	// An API key of a role that reads (read, operate, admin): a session of that key
	// (docs/security.md#console), re-checked on every request, so revoking the key or the
	// end of its rotation's overlap ends the session at the next request.
	p, err := c.api.Authenticate(r.Context(), r.PostForm.Get("token"))
	switch {
	case automation.CodeOf(err) == automation.CodeTooManyRequests:
		return err
	case errors.Is(err, httpapi.ErrUnknownCredential) || (err == nil && p.KeyPrefix == ""):
		c.signIn(w, r, http.StatusUnauthorized, "That is not the API token, nor a live API key. Nothing was signed in.")
		return nil
	case err != nil:
		return automation.RetryAfter(5*time.Second, err)
	case !p.Has(httpapi.RoleRead):
		c.fail(w, r, nil, http.StatusForbidden, "No role for the console",
			"The key "+p.Name+" has the roles "+roleList(p.Roles)+"; the console needs read, operate or admin. Nothing was signed in.")
		return nil
	}
	_, v := c.sess.issueFor(now, p)
	srvsession.Begin(r.Context(), srvsession.Subject{Principal: p.Name, KeyPrefix: p.KeyPrefix})
	http.SetCookie(w, cookie(r, v))
	seeOther(w, r, safeNext(r.PostForm.Get("next")))
	return nil
}

func roleList(rs []httpapi.Role) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return strings.Join(out, ", ")
}

// seeOther answers a form with 303 to the page to load next. http.Redirect writes a body and
// its Content-Type only for GET and HEAD; a POST's 303 gets text/html here, so the Functions
// router's default for replies without one (application/json) never labels it.
func seeOther(w http.ResponseWriter, r *http.Request, to string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// safeNext keeps a redirect inside the console (never another site: "//evil", "/\evil", nor
// another path of this one through dot segments: "/api/console/../support").
func safeNext(n string) string {
	if !strings.HasPrefix(n, Base+"/") || strings.ContainsAny(n, "\\\r\n") || strings.HasPrefix(n, "//") {
		return Base + "/"
	}
	u, err := url.Parse(n)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return Base + "/"
	}
	// http.Redirect cleans the path: judge it as the browser will get it ("/api/console/../x"
	// leaves the console).
	if c := path.Clean(u.Path); c != Base && !strings.HasPrefix(c, Base+"/") {
		return Base + "/"
	}
	return n
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, x *call) error {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: Base, MaxAge: -1, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode})
	seeOther(w, r, Base+"/")
	return nil
}

func (c *Console) static(w http.ResponseWriter, r *http.Request, x *call) error {
	name := r.PathValue("file")
	b, err := fs.ReadFile(assets, "static/"+name)
	if err != nil || strings.HasPrefix(name, ".") {
		return automation.Errorf(automation.CodeNotFound, "no such file")
	}
	switch {
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	default:
		w.Header().Set("Content-Type", http.DetectContentType(b))
	}
	w.Header().Set("Cache-Control", "private, max-age=3600")
	_, _ = w.Write(b)
	return nil
}

func (c *Console) extension(p Page, fn func(*http.Request, PageCall) (template.HTML, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, x *call) error {
		pc := PageCall{Caller: x.caller, units: c.deps.Units}
		if x.csrf != "" {
			pc.CSRFField = template.HTML(`<input type="hidden" name="` + csrfField + `" value="` + template.HTMLEscapeString(x.csrf) + `">`)
		}
		body, err := fn(r, pc)
		status := http.StatusOK
		var refused *Refused
		if errors.As(err, &refused) {
			body, status, err = refused.Body, refused.Status, nil
		}
		if err != nil {
			return err
		}
		d := c.data(r, x, p.Title, body)
		d.Status = status
		c.render(w, status, "extension", d)
		return nil
	}
}

// formText refuses a form holding a name or value that is not UTF-8 (a browser sends the
// page's UTF-8; "%FF" is typed by hand): the JSON APIs refuse such bytes before decoding
// (strictjson.Text), and a form must not store what the API would refuse. Errors:
// CodeInvalidInput naming each such member (sorted), nil when all are text.
func formText(f url.Values) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(f)) {
		ok := utf8.ValidString(k)
		for _, v := range f[k] {
			ok = ok && utf8.ValidString(v)
		}
		if !ok {
			errs = append(errs, automation.Invalid(strings.ToValidUTF8(k, "\uFFFD"), "is not UTF-8 text; nothing was done"))
		}
	}
	return automation.InvalidFields(errs...)
}

// operator is who acts: the signed-in identity the front end names (App Service
// authentication, or X-Automation-Operator), else the form's operator field.
func operator(r *http.Request, x *call) string {
	if x.caller.Operator != "" {
		return x.caller.Operator
	}
	return strings.TrimSpace(r.PostForm.Get("operator"))
}

var errNoVersion = &automation.Error{Code: automation.CodePreconditionRequired, Field: "version",
	Message: "the form did not say which version of the row you read; reload the page and act from it"}

func isStale(err error) bool {
	return automation.CodeOf(err) == automation.CodePreconditionFailed || errors.Is(err, store.ErrLeaseLost)
}

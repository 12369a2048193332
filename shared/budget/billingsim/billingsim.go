package billingsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/simhttp"
)

// FaultKind names a fault.
type FaultKind string

// Faults; see the package comment.
const (
	Fail               FaultKind = "fail"
	Slow               FaultKind = "slow"
	TimeoutAfterCommit FaultKind = "timeoutAfterCommit"
	LostAnswer         FaultKind = "lostAnswer"
	WrongOrder         FaultKind = "wrongOrder"
	WrongCurrency      FaultKind = "wrongCurrency"
	OutOfBalance       FaultKind = "outOfBalance"
)

// Operations a fault can target ("" = any).
const (
	OpCreate  = "create"
	OpGet     = "get"
	OpBalance = "balance"
)

// Fault is one injected fault: Kind on the next Times requests of Op (Times 0 = 1).
type Fault struct {
	Kind  FaultKind     `json:"kind"`
	Op    string        `json:"op,omitempty"`
	Times int           `json:"times,omitempty"`
	Delay time.Duration `json:"delay,omitempty"`
}

// Server is the simulated provider. Create it with New; it is an http.Handler.
type Server struct {
	clock automation.Clock
	mu    sync.Mutex
	// ledger: one entry per orderId, in commit order.
	ledger   []billing.Transfer
	byOrder  map[string]int
	balances map[string]money.Minor // key: businessUnitId + "/" + currency
	faults   []Fault
	decide   func(op, key string) (Fault, bool)
	requests map[string]int
	mux      *http.ServeMux
}

// New returns a server with an empty ledger and no balances.
func New(clock automation.Clock) *Server {
	s := &Server{clock: clock, byOrder: map[string]int{}, balances: map[string]money.Minor{}, requests: map[string]int{}, mux: http.NewServeMux()}
	s.mux.HandleFunc("POST /v1/transfers", s.create)
	s.mux.HandleFunc("GET /v1/transfers/{orderId}", s.get)
	s.mux.HandleFunc("GET /v1/balances/{businessUnitId}", s.balance)
	s.mux.HandleFunc("POST /sim/faults", s.inject)
	s.mux.HandleFunc("POST /sim/balances", s.setBalance)
	s.mux.HandleFunc("GET /sim/ledger", s.ledgerJSON)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetBalance sets a unit's available balance in a currency.
func (s *Server) SetBalance(businessUnitID, currency string, available money.Minor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balances[businessUnitID+"/"+currency] = available
}

// BalanceOf returns a unit's available balance.
func (s *Server) BalanceOf(businessUnitID, currency string) money.Minor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balances[businessUnitID+"/"+currency]
}

// Inject queues faults.
func (s *Server) Inject(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range f {
		if x.Times <= 0 {
			x.Times = 1
		}
		s.faults = append(s.faults, x)
	}
}

// SetFaultFunc sets a decider consulted for each request no queued fault matches: op is
// the operation (OpCreate, OpGet, OpBalance), key the orderId (create, get) or the business
// unit (balance); it answers the fault to apply, if any. nil removes it. The simulator draws
// its billing faults here, per request, from its seed. decide runs on the request's goroutine
// with the server's lock held: it must not call the server.
func (s *Server) SetFaultFunc(decide func(op, key string) (Fault, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decide = decide
}

// ClearFaults drops every queued fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Ledger returns a copy of the ledger, in commit order.
func (s *Server) Ledger() []billing.Transfer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]billing.Transfer(nil), s.ledger...)
}

// Requests counts requests per operation (create, get, balance).
func (s *Server) Requests(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[op]
}

// take consumes the first queued fault for op, else asks the fault func about key (with
// s.mu held).
func (s *Server) take(op, key string) (Fault, bool) {
	for i, f := range s.faults {
		if f.Op == "" || f.Op == op {
			f.Times--
			if f.Times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			} else {
				s.faults[i] = f
			}
			return f, true
		}
	}
	if s.decide != nil {
		return s.decide(op, key)
	}
	return Fault{}, false
}

func problem(w http.ResponseWriter, code int, kind, detail string) {
	simhttp.WriteJSON(w, code, map[string]string{"error": kind, "detail": detail})
}

// before applies a pre-commit fault; it reports whether the request is answered already.
func before(w http.ResponseWriter, r *http.Request, f Fault, has bool) bool {
	if !has {
		return false
	}
	switch f.Kind {
	case Fail:
		problem(w, http.StatusInternalServerError, "UNAVAILABLE", "simulated failure")
		return true
	case Slow:
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
		}
	}
	return false
}

// after applies a post-commit fault to the answer; it reports whether it answered.
func after(w http.ResponseWriter, r *http.Request, f Fault, has bool, t billing.Transfer, code int) bool {
	if !has {
		return false
	}
	switch f.Kind {
	case TimeoutAfterCommit:
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
		}
		simhttp.WriteJSON(w, code, t)
		return true
	case LostAnswer:
		simhttp.HangUp(w) // closes the connection without an answer
		return true
	case WrongOrder:
		t.OrderID += "-other"
		simhttp.WriteJSON(w, code, t)
		return true
	case WrongCurrency:
		if t.Currency == "USD" {
			t.Currency = "EUR"
		} else {
			t.Currency = "USD"
		}
		simhttp.WriteJSON(w, code, t)
		return true
	}
	return false
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var req billing.TransferRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, "MALFORMED", err.Error())
		return
	}
	if req.OrderID == "" || req.BusinessUnitID == "" || req.TransferType == "" {
		problem(w, http.StatusUnprocessableEntity, "INVALID", "orderId, businessUnitId and transferType are required")
		return
	}
	if _, err := money.ParseCurrency(req.Currency); err != nil {
		problem(w, http.StatusUnprocessableEntity, "INVALID", err.Error())
		return
	}
	s.mu.Lock()
	s.requests[OpCreate]++
	f, has := s.take(OpCreate, req.OrderID)
	s.mu.Unlock()
	if before(w, r, f, has) {
		return
	}
	s.mu.Lock()
	code := http.StatusOK
	i, exists := s.byOrder[req.OrderID]
	if exists {
		t := s.ledger[i]
		if t.Amount != req.Amount || t.Currency != req.Currency || t.BusinessUnitID != req.BusinessUnitID {
			s.mu.Unlock()
			problem(w, http.StatusConflict, "ORDER_MISMATCH", "order "+req.OrderID+" exists with another amount, currency or business unit")
			return
		}
	} else {
		key := req.BusinessUnitID + "/" + req.Currency
		t := billing.Transfer{OrderID: req.OrderID, BusinessUnitID: req.BusinessUnitID, Amount: req.Amount, Currency: req.Currency,
			TransferType: req.TransferType, CreatedOn: s.clock.Now()}
		if (has && f.Kind == OutOfBalance) || s.balances[key] < req.Amount {
			t.Status, t.Reason = billing.StatusFailed, billing.ReasonInsufficientBalance
		} else {
			t.Status = billing.StatusSucceeded
			s.balances[key] -= req.Amount
		}
		t.Reference = fmt.Sprintf("sim-%06d", len(s.ledger)+1)
		s.ledger = append(s.ledger, t)
		i = len(s.ledger) - 1
		s.byOrder[req.OrderID] = i
		code = http.StatusCreated
	}
	t := s.ledger[i]
	s.mu.Unlock()
	if after(w, r, f, has, t, code) {
		return
	}
	simhttp.WriteJSON(w, code, t)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests[OpGet]++
	f, has := s.take(OpGet, r.PathValue("orderId"))
	s.mu.Unlock()
	if before(w, r, f, has) {
		return
	}
	s.mu.Lock()
	i, ok := s.byOrder[r.PathValue("orderId")]
	var t billing.Transfer
	if ok {
		t = s.ledger[i]
	}
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, "NOT_FOUND", "no order "+r.PathValue("orderId"))
		return
	}
	if after(w, r, f, has, t, http.StatusOK) {
		return
	}
	simhttp.WriteJSON(w, http.StatusOK, t)
}

func (s *Server) balance(w http.ResponseWriter, r *http.Request) {
	cur := r.URL.Query().Get("currency")
	if _, err := money.ParseCurrency(cur); err != nil {
		problem(w, http.StatusUnprocessableEntity, "INVALID", err.Error())
		return
	}
	s.mu.Lock()
	s.requests[OpBalance]++
	f, has := s.take(OpBalance, r.PathValue("businessUnitId"))
	avail := s.balances[r.PathValue("businessUnitId")+"/"+cur]
	s.mu.Unlock()
	if before(w, r, f, has) {
		return
	}
	if has && f.Kind == OutOfBalance {
		avail = 0
	}
	simhttp.WriteJSON(w, http.StatusOK, billing.Balance{BusinessUnitID: r.PathValue("businessUnitId"), Currency: cur, Available: avail})
}

func (s *Server) inject(w http.ResponseWriter, r *http.Request) {
	var f Fault
	if err := json.NewDecoder(r.Body).Decode(&f); err != nil || f.Kind == "" {
		problem(w, http.StatusBadRequest, "MALFORMED", "want {kind, op, times, delay}")
		return
	}
	s.Inject(f)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) setBalance(w http.ResponseWriter, r *http.Request) {
	var b billing.Balance
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil || b.BusinessUnitID == "" {
		problem(w, http.StatusBadRequest, "MALFORMED", "want {businessUnitId, currency, available}")
		return
	}
	if _, err := money.ParseCurrency(b.Currency); err != nil {
		problem(w, http.StatusUnprocessableEntity, "INVALID", err.Error())
		return
	}
	s.SetBalance(b.BusinessUnitID, b.Currency, b.Available)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) ledgerJSON(w http.ResponseWriter, _ *http.Request) {
	l := s.Ledger()
	sort.SliceStable(l, func(i, j int) bool { return strings.Compare(l[i].OrderID, l[j].OrderID) < 0 })
	simhttp.WriteJSON(w, http.StatusOK, map[string]any{"transfers": l})
}

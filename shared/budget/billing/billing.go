package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/money"
)

// Transfer statuses as the provider reports them.
const (
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
)

// Reasons of a FAILED transfer.
const (
	ReasonInsufficientBalance = "INSUFFICIENT_BALANCE"
)

// Sentinel errors; see the package comment.
var (
	ErrNotFound       = errors.New("billing: order not found")
	ErrRejected       = errors.New("billing: request rejected")
	ErrOutcomeUnknown = errors.New("billing: outcome unknown")
)

// TransferRequest asks to charge Amount minor units of Currency to BusinessUnitID under
// OrderID (the idempotency key).
type TransferRequest struct {
	OrderID        string      `json:"orderId"`
	BusinessUnitID string      `json:"businessUnitId"`
	Amount         money.Minor `json:"amount"`
	Currency       string      `json:"currency"`
	TransferType   string      `json:"transferType"`
	Description    string      `json:"description,omitempty"`
}

// Transfer is the provider's record of an order.
type Transfer struct {
	OrderID        string      `json:"orderId"`
	BusinessUnitID string      `json:"businessUnitId"`
	Status         string      `json:"status"`
	Amount         money.Minor `json:"amount"`
	Currency       string      `json:"currency"`
	TransferType   string      `json:"transferType"`
	Reference      string      `json:"reference,omitempty"`
	Reason         string      `json:"reason,omitempty"`
	CreatedOn      time.Time   `json:"createdOn"`
}

// Balance is the amount a business unit can still be charged.
type Balance struct {
	BusinessUnitID string      `json:"businessUnitId"`
	Currency       string      `json:"currency"`
	Available      money.Minor `json:"available"`
}

// Client calls a billing provider over HTTP. Timeout bounds each call (default 10 s): a
// create that times out is ErrOutcomeUnknown.
type Client struct {
	BaseURL string // e.g. "http://127.0.0.1:8089"
	Token   string // sent as "Authorization: Bearer …" when set
	HTTP    *http.Client
	Timeout time.Duration
}

func (c *Client) do(ctx context.Context, method, path string, body any, out any) (int, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return 0, fmt.Errorf("billing: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %s: %v", ErrOutcomeUnknown, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%w: %s %s: reading the answer: %v", ErrOutcomeUnknown, method, path, err)
	}
	if resp.StatusCode/100 == 2 && out != nil {
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(out); err != nil {
			return resp.StatusCode, fmt.Errorf("%w: %s %s: unreadable answer: %v", ErrOutcomeUnknown, method, path, err)
		}
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("billing: %s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return resp.StatusCode, nil
}

// CreateTransfer creates (or, for an existing OrderID, returns) the order. The answer is
// checked against the request: another orderId, business unit, amount or currency, or a
// status other than SUCCEEDED/FAILED, is ErrOutcomeUnknown (never trusted).
func (c *Client) CreateTransfer(ctx context.Context, r TransferRequest) (Transfer, error) {
	var t Transfer
	code, err := c.do(ctx, http.MethodPost, "/v1/transfers", r, &t)
	if err != nil {
		switch {
		case errors.Is(err, ErrOutcomeUnknown):
			return Transfer{}, err
		case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
			return Transfer{}, fmt.Errorf("%w: %v", ErrRejected, err)
		default: // 5xx, 409 order mismatch, anything else: the order may exist
			return Transfer{}, fmt.Errorf("%w: %v", ErrOutcomeUnknown, err)
		}
	}
	if err := Check(r, t); err != nil {
		return Transfer{}, err
	}
	return t, nil
}

// Check compares an answer with the request it answers; a difference is ErrOutcomeUnknown.
func Check(r TransferRequest, t Transfer) error {
	switch {
	case t.OrderID != r.OrderID:
		return fmt.Errorf("%w: answer for order %q, asked %q", ErrOutcomeUnknown, t.OrderID, r.OrderID)
	case t.Currency != r.Currency || t.Amount != r.Amount:
		return fmt.Errorf("%w: answer %s %s, asked %s %s", ErrOutcomeUnknown, t.Amount, t.Currency, r.Amount, r.Currency)
	case t.BusinessUnitID != r.BusinessUnitID:
		return fmt.Errorf("%w: answer for business unit %q, asked %q", ErrOutcomeUnknown, t.BusinessUnitID, r.BusinessUnitID)
	case t.Status != StatusSucceeded && t.Status != StatusFailed:
		return fmt.Errorf("%w: status %q", ErrOutcomeUnknown, t.Status)
	}
	return nil
}

// GetTransfer fetches the order; ErrNotFound when the provider has none.
func (c *Client) GetTransfer(ctx context.Context, orderID string) (Transfer, error) {
	var t Transfer
	code, err := c.do(ctx, http.MethodGet, "/v1/transfers/"+url.PathEscape(orderID), nil, &t)
	if err != nil {
		if code == http.StatusNotFound {
			return Transfer{}, fmt.Errorf("%w: %s", ErrNotFound, orderID)
		}
		if !errors.Is(err, ErrOutcomeUnknown) {
			err = fmt.Errorf("%w: %v", ErrOutcomeUnknown, err)
		}
		return Transfer{}, err
	}
	if t.OrderID != orderID {
		return Transfer{}, fmt.Errorf("%w: lookup of %q answered %q", ErrOutcomeUnknown, orderID, t.OrderID)
	}
	return t, nil
}

// GetBalance reads the unit's available balance in currency.
func (c *Client) GetBalance(ctx context.Context, businessUnitID, currency string) (Balance, error) {
	var b Balance
	_, err := c.do(ctx, http.MethodGet, "/v1/balances/"+url.PathEscape(businessUnitID)+"?currency="+url.QueryEscape(currency), nil, &b)
	if err != nil {
		return Balance{}, err
	}
	if b.Currency != currency || b.BusinessUnitID != businessUnitID {
		return Balance{}, fmt.Errorf("billing: balance answer for %s %s, asked %s %s", b.BusinessUnitID, b.Currency, businessUnitID, currency)
	}
	return b, nil
}

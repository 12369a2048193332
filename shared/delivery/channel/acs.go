package channel

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// ACS access-key request signing (docs/channels.md#acs-signing): every Azure Communication
// Services data-plane request carries
//
//	x-ms-date: <RFC 1123 date, GMT>
//	x-ms-content-sha256: base64(SHA-256(body))
//	Authorization: HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=<base64>
//
// where the signature is HMAC-SHA256, keyed with the base64-decoded access key, over
// METHOD + "\n" + path and query + "\n" + date + ";" + host + ";" + content hash. Checked
// against the vectors of Microsoft's own SDK tests (TestACSSignMicrosoftVectors).
const (
	ACSDateHeader    = "x-ms-date"
	ACSContentHeader = "x-ms-content-sha256"
	acsAuthPrefix    = "HMAC-SHA256 SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature="
)

// ACSConnection is a parsed ACS connection string
// ("endpoint=https://<resource>.communication.azure.com/;accesskey=<base64>").
type ACSConnection struct {
	Endpoint  string // https://host[:port] without a trailing slash
	AccessKey []byte // decoded
}

// ParseACSConnectionString reads a connection string; the endpoint must be an absolute
// http(s) URL and the access key base64.
func ParseACSConnectionString(s string) (ACSConnection, error) {
	var c ACSConnection
	var key string
	for _, part := range strings.Split(s, ";") {
		// Cut at the first '=': the key's base64 padding stays in the value.
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "endpoint":
			c.Endpoint = strings.TrimRight(v, "/")
		case "accesskey":
			key = v
		}
	}
	u, err := url.Parse(c.Endpoint)
	if c.Endpoint == "" || err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return ACSConnection{}, errors.New("acs: the connection string has no endpoint=https://… member")
	}
	c.AccessKey, err = base64.StdEncoding.DecodeString(strings.TrimSpace(key))
	if err != nil || len(c.AccessKey) == 0 {
		return ACSConnection{}, errors.New("acs: the connection string's accesskey is not base64")
	}
	return c, nil
}

// ACSContentHash is base64(SHA-256(body)).
func ACSContentHash(body []byte) string {
	sum := sha256.Sum256(body)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// ACSSignature is the signature of one request: pathAndQuery as sent (e.g.
// "/sms?api-version=2021-03-07"), host as in the Host header, date as in x-ms-date.
func ACSSignature(key []byte, method, pathAndQuery, date, host, contentHash string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(method + "\n" + pathAndQuery + "\n" + date + ";" + host + ";" + contentHash))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// ACSSign sets the three headers on req for body, signed at now (UTC).
func ACSSign(req *http.Request, body []byte, key []byte, now time.Time) {
	date := now.UTC().Format(http.TimeFormat)
	hash := ACSContentHash(body)
	req.Header.Set(ACSDateHeader, date)
	req.Header.Set(ACSContentHeader, hash)
	req.Header.Set("Authorization", acsAuthPrefix+ACSSignature(key, req.Method, req.URL.RequestURI(), date, req.URL.Host, hash))
}

// ACSAuthorization is the Authorization header value for a signature (tests, the simulator).
func ACSAuthorization(signature string) string { return acsAuthPrefix + signature }

// acsClient is what the ACS channels (SMS, WhatsApp) share: the parsed connection, the
// client (no redirects, a bounded request) and the clock that signs.
type acsClient struct {
	name   string // the channel's name, first in every error ("sms", "whatsapp")
	conn   ACSConnection
	client *http.Client
	clock  automation.Clock
}

// newACSClient parses connectionString and bounds timeout (requestTimeout); a nil clock is
// automation.SystemClock. It returns the defaults it applied, for the channel's config.
func newACSClient(name, connectionString string, timeout time.Duration, base *http.Client, clock automation.Clock) (acsClient, time.Duration, error) {
	conn, err := ParseACSConnectionString(connectionString)
	if err != nil {
		return acsClient{}, 0, err
	}
	if timeout, err = requestTimeout(name, timeout); err != nil {
		return acsClient{}, 0, err
	}
	if clock == nil {
		clock = automation.SystemClock{}
	}
	return acsClient{name: name, conn: conn, client: sendClient(base, timeout), clock: clock}, timeout, nil
}

// acsAnswer is ACS's answer to one request: its status code, up to 64 KiB of its body, its
// Retry-After header, and Status, the line errors carry ("sms https://… answered 400 Bad
// Request: <the body's first 300 bytes>").
type acsAnswer struct {
	Code       int
	Body       []byte
	RetryAfter string
	Status     string
}

// post signs raw (ACSSign) and POSTs it as JSON to the endpoint's pathAndQuery with header's
// extra headers. An error is the outcome of a request that got no answer: UNKNOWN when the
// request was written in full (ACS may have acted on it), else a plain error (retry:
// nothing was sent). Every answer, whatever its status, comes back as an acsAnswer.
func (a acsClient) post(ctx context.Context, pathAndQuery string, raw []byte, header http.Header) (acsAnswer, error) {
	ctx, wrote := watchWrite(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.conn.Endpoint+pathAndQuery, bytes.NewReader(raw))
	if err != nil {
		return acsAnswer{}, automation.Permanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	ACSSign(req, raw, a.conn.AccessKey, a.clock.Now())
	resp, err := a.client.Do(req)
	if err != nil {
		if wrote.Load() {
			return acsAnswer{}, automation.Unknown(fmt.Errorf("%s %s: no answer after the request was sent: %w", a.name, a.conn.Endpoint, err))
		}
		return acsAnswer{}, fmt.Errorf("%s %s: request not sent: %w", a.name, a.conn.Endpoint, err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return acsAnswer{Code: resp.StatusCode, Body: rb, RetryAfter: resp.Header.Get("Retry-After"),
		Status: fmt.Sprintf("%s %s answered %s: %.300s", a.name, a.conn.Endpoint, resp.Status, rb)}, nil
}

// refusal is the outcome of an answer the channel did not accept, by the rules both ACS
// channels share (docs/channels.md): 429 = retry after Retry-After; 401, 403, 408 and the
// channel's retry codes = retry (nothing sent); 5xx = UNKNOWN; any other = permanent.
func (a acsClient) refusal(ans acsAnswer, retry ...int) error {
	switch c := ans.Code; {
	case c == http.StatusTooManyRequests:
		return automation.RetryAfter(parseRetryAfter(ans.RetryAfter, a.clock.Now()), errors.New(ans.Status))
	case c == http.StatusUnauthorized || c == http.StatusForbidden || c == http.StatusRequestTimeout || slices.Contains(retry, c):
		return errors.New(ans.Status)
	case c >= 500:
		return automation.Unknown(errors.New(ans.Status))
	}
	return automation.Permanent(errors.New(ans.Status))
}

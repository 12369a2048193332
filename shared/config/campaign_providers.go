package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ChannelNames are the delivery channels' names; every channel is a campaign provider under
// its own name (docs/campaigns.md#providers), so no configured provider may take one, even a
// channel not enabled yet.
var ChannelNames = []string{"log", "webhook", "email", "inbox", "event", "push", "sms", "whatsapp"}

// campaignProviderMembers are the members of one AUTOMATION_CAMPAIGN_PROVIDERS entry; any
// other (or another spelling) is refused, so a typo never silently drops a limit.
var campaignProviderMembers = []string{"name", "baseUrl", "actionTypes", "dedupe", "lookup", "concurrency", "ratePerSecond", "timeoutSeconds"}

var (
	providerNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	actionTypeRE   = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)
)

// Limits of one configured provider.
const (
	maxProviderConcurrency = 256
	maxProviderRate        = 100000
	maxProviderTimeout     = 300 // seconds
)

// parseCampaignProviders reads AUTOMATION_CAMPAIGN_PROVIDERS: "" is none; otherwise a JSON
// array of objects with exactly the members of campaignProviderMembers (name, baseUrl and
// actionTypes required). Errors name the entry and member and never show a URL's user info
// or query.
func parseCampaignProviders(v string) ([]CampaignProviderConfig, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf("want a JSON array of provider objects: %v", jsonProblem(err))
	}
	var out []CampaignProviderConfig
	seen := map[string]bool{}
	for i, m := range raw {
		at := fmt.Sprintf("[%d]", i)
		if m == nil {
			return nil, fmt.Errorf("%s: want an object", at)
		}
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			if !slices.Contains(campaignProviderMembers, k) {
				return nil, fmt.Errorf("%s: unknown member %q (known: %s)", at, k, strings.Join(campaignProviderMembers, ", "))
			}
		}
		var e struct {
			Name           string   `json:"name"`
			BaseURL        string   `json:"baseUrl"`
			ActionTypes    []string `json:"actionTypes"`
			Dedupe         bool     `json:"dedupe"`
			Lookup         bool     `json:"lookup"`
			Concurrency    *int     `json:"concurrency"`
			RatePerSecond  *float64 `json:"ratePerSecond"`
			TimeoutSeconds *int     `json:"timeoutSeconds"`
		}
		for _, k := range keys {
			// One member at a time, so a wrong type names the member.
			one, _ := json.Marshal(map[string]json.RawMessage{k: m[k]})
			if err := json.Unmarshal(one, &e); err != nil {
				return nil, fmt.Errorf("%s.%s: %v", at, k, jsonProblem(err))
			}
		}
		if !providerNameRE.MatchString(e.Name) {
			return nil, fmt.Errorf("%s.name: want 1-64 of A-Z a-z 0-9 _ -, got %q", at, clip(e.Name))
		}
		at = fmt.Sprintf("[%d] (%s)", i, e.Name)
		if slices.Contains(ChannelNames, e.Name) {
			return nil, fmt.Errorf("%s.name: %q is a delivery channel's name (%s are taken)", at, e.Name, strings.Join(ChannelNames, ", "))
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("%s.name: given twice", at)
		}
		seen[e.Name] = true
		u, err := url.Parse(e.BaseURL)
		switch {
		case e.BaseURL == "":
			return nil, fmt.Errorf("%s.baseUrl: is required", at)
		case err != nil || u.Host == "" || u.Opaque != "" || (u.Scheme != "https" && u.Scheme != "http"):
			return nil, fmt.Errorf("%s.baseUrl: %s is not an absolute http(s) URL", at, shownURL(e.BaseURL))
		case u.Scheme == "http" && !loopbackHost(u.Hostname()):
			return nil, fmt.Errorf("%s.baseUrl: %s must be https (http only for 127.0.0.1, localhost or [::1])", at, shownURL(e.BaseURL))
		case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			return nil, fmt.Errorf("%s.baseUrl: %s must carry no user info, query or fragment (put credentials in AUTOMATION_CAMPAIGN_PROVIDER_TOKENS)", at, shownURL(e.BaseURL))
		}
		if len(e.ActionTypes) == 0 {
			return nil, fmt.Errorf("%s.actionTypes: want at least one action type", at)
		}
		for j, t := range e.ActionTypes {
			if !actionTypeRE.MatchString(t) {
				return nil, fmt.Errorf("%s.actionTypes[%d]: want an action type like TOP_UP, got %q", at, j, clip(t))
			}
			if slices.Contains(e.ActionTypes[:j], t) {
				return nil, fmt.Errorf("%s.actionTypes[%d]: %s given twice", at, j, t)
			}
		}
		p := CampaignProviderConfig{Name: e.Name, BaseURL: e.BaseURL, ActionTypes: e.ActionTypes, Dedupe: e.Dedupe, Lookup: e.Lookup}
		if c := e.Concurrency; c != nil {
			if *c < 1 || *c > maxProviderConcurrency {
				return nil, fmt.Errorf("%s.concurrency: want 1..%d calls in flight, got %d", at, maxProviderConcurrency, *c)
			}
			p.Concurrency = *c
		}
		if r := e.RatePerSecond; r != nil {
			if !(*r > 0) || *r > maxProviderRate {
				return nil, fmt.Errorf("%s.ratePerSecond: want more than 0 and at most %d calls per second (omit it for no limit), got %v", at, maxProviderRate, *r)
			}
			p.RatePerSecond = *r
		}
		if s := e.TimeoutSeconds; s != nil {
			if *s < 1 || *s > maxProviderTimeout {
				return nil, fmt.Errorf("%s.timeoutSeconds: want 1..%d, got %d", at, maxProviderTimeout, *s)
			}
			p.Timeout = time.Duration(*s) * time.Second
		}
		out = append(out, p)
	}
	return out, nil
}

// addProviderTokens reads AUTOMATION_CAMPAIGN_PROVIDER_TOKENS ({"name":"token"}) into ps.
// Every name must be a configured provider and every token a non-empty header-safe string;
// errors name the provider, never the token.
func addProviderTokens(ps []CampaignProviderConfig, v string) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	var tokens map[string]string
	d := json.NewDecoder(bytes.NewReader([]byte(v)))
	if err := d.Decode(&tokens); err != nil || tokens == nil || d.More() {
		return fmt.Errorf(`want a JSON object {"<provider name>":"<token>"} (the value is not shown)`)
	}
	for _, n := range slices.Sorted(maps.Keys(tokens)) {
		i := slices.IndexFunc(ps, func(p CampaignProviderConfig) bool { return p.Name == n })
		if i < 0 {
			return fmt.Errorf("%q is not a provider of AUTOMATION_CAMPAIGN_PROVIDERS", clip(n))
		}
		t := tokens[n]
		if t == "" || strings.IndexFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f || r > '~' }) >= 0 {
			return fmt.Errorf("%s: want a non-empty token of printable ASCII without spaces (%d characters given, not shown)", n, len(t))
		}
		ps[i].Token = t
	}
	return nil
}

// loopbackHost reports whether host is a loopback name or address.
func loopbackHost(host string) bool {
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}

// jsonProblem is a JSON error without the document's text.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("want %s, got a JSON %s", te.Type, te.Value)
	}
	return "invalid JSON"
}

// clip shortens a shown value to 64 characters.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

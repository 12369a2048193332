package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/strictjson"
)

// campaignDraft is the campaign form as the page shows it: a stored campaign to edit, or what
// the person typed when the save was refused (kept, so nothing they wrote is lost).
type campaignDraft struct {
	CampaignID, Name, Status string
	Triggers                 string // one event type a line (commas also separate)
	Actions                  string // the actions as a JSON array: [{key, type, provider, params, when, next}]
	Version                  int64  // the version read (the API's If-Match); 0 on the create form
}

// campaignDraftOf is c's definition as the edit form shows it (actions indented, one trigger a line).
func campaignDraftOf(c store.Campaign) (campaignDraft, error) {
	var def campaign.Definition
	if err := json.Unmarshal([]byte(c.DefinitionJSON), &def); err != nil {
		return campaignDraft{}, fmt.Errorf("campaign %s: stored definition: %w", c.CampaignID, err)
	}
	if def.Actions == nil {
		def.Actions = []campaign.Action{}
	}
	actions, err := json.MarshalIndent(def.Actions, "", "  ")
	if err != nil {
		return campaignDraft{}, err
	}
	return campaignDraft{CampaignID: c.CampaignID, Name: def.Name, Status: string(def.Status), Triggers: strings.Join(def.Triggers, "\n"),
		Actions: string(actions), Version: c.Version}, nil
}

// definitionOf reads the form's definition: triggers one a line (or comma-separated; blanks
// dropped), actions a JSON array of campaign.Action read strictly (an unknown member is
// refused). Errors: CodeInvalidInput naming "actions". The definition's rules (action types,
// providers, params against each type's schema, the chain, the triggers) are the service's:
// campaign.Admin.Save checks them as for PUT /api/campaigns/{id}.
func definitionOf(d campaignDraft) (campaign.Definition, error) {
	def := campaign.Definition{Name: d.Name, Status: store.CampaignStatus(strings.TrimSpace(d.Status)), Triggers: []string{}, Actions: []campaign.Action{}}
	for _, t := range strings.FieldsFunc(d.Triggers, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
		if t = strings.TrimSpace(t); t != "" {
			def.Triggers = append(def.Triggers, t)
		}
	}
	if raw := strings.TrimSpace(d.Actions); raw != "" {
		// The API's PUT reads its body by strictjson's rules (httpapi.DecodeJSONBytes); the
		// form's JSON is held to the same: not UTF-8, a lone surrogate escape (which
		// encoding/json would store as U+FFFD) or a member named twice in one object (which
		// encoding/json would read as the last one, dropping the first) is refused.
		if err := strictjson.Text([]byte(raw)); err != nil {
			return def, automation.Invalid("actions", "%v", err)
		}
		switch err := strictjson.Decode([]byte(raw), &def.Actions); {
		case errors.Is(err, strictjson.ErrTrailing):
			return def, automation.Invalid("actions", "must be one JSON array; text follows it")
		case err != nil:
			return def, automation.Invalid("actions", "must be a JSON array of actions, each {\"key\", \"type\", \"provider\", \"params\"} (optional \"when\", \"next\"): %v", err)
		}
		if err := strictjson.Check([]byte(raw)); err != nil {
			return def, automation.Invalid("actions", "%v", err)
		}
	}
	return def, nil
}

// save creates or replaces a campaign through campaign.Admin.SaveBy, the service of PUT
// /api/campaigns/{id} (the same checks: nothing is stored when one fails). Without a version
// it creates (a campaign that exists: 409); with the version the page showed it replaces that
// version (If-Match: a campaign saved, paused or stopped since answers 412 with the campaign
// as it is now and the edit form at its current version, the draft kept beside it). A
// definition the service refuses answers 422 naming the member, the draft kept in the form.
// Like the API's PUT, the save is audited under the page's operator (the session's
// principal first: campaign.Admin.SaveBy writes a CampaignAudit CREATE or SAVE row in the
// save's transaction); the notice names who saved.
func (cp campaignPages) save(r *http.Request, pc PageCall) (template.HTML, error) {
	f := r.PostForm
	bu, err := postedUnit(pc, f)
	if err != nil {
		return "", err
	}
	draft := campaignDraft{CampaignID: strings.TrimSpace(f.Get("campaignId")), Name: f.Get("name"), Status: f.Get("status"),
		Triggers: f.Get("triggers"), Actions: f.Get("actions")}
	var expected *int64
	if v := strings.TrimSpace(f.Get("version")); v != "" {
		ver, err := formVersion(v, "campaign")
		if err != nil {
			return "", err
		}
		draft.Version, expected = ver, &ver
	}
	d := campaignsPage{BusinessUnitID: bu}
	if expected != nil {
		d.CampaignID, d.EditDraft = draft.CampaignID, &draft
	} else {
		d.CreateDraft = &draft
	}
	var c store.Campaign
	err = campaign.CheckID(draft.CampaignID)
	if err != nil {
		if expected != nil {
			return "", err // an edit of a campaign that cannot exist: 404, as the API's PUT
		}
		err = automation.Invalid("campaignId", "must be 1 to 100 letters, digits, '-' or '_', starting with a letter or digit")
	}
	if err == nil {
		var def campaign.Definition
		if def, err = definitionOf(draft); err == nil {
			c, err = cp.admin.SaveBy(r.Context(), bu, draft.CampaignID, def, expected, pageOperator(r, pc))
		}
	}
	if err == nil {
		verb := "created"
		if expected != nil {
			verb = "saved"
		}
		by := ""
		if op := pageOperator(r, pc); op != "" {
			by = " by " + op
		}
		return cp.render(r, pc, campaignsPage{BusinessUnitID: bu, CampaignID: c.CampaignID,
			Notice: fmt.Sprintf("Campaign %s %s%s: %s, version %d.", c.CampaignID, verb, by, c.Status, c.Version)}, "")
	}
	if expected != nil && (automation.CodeOf(err) == automation.CodeNotFound || errors.Is(err, store.ErrNotFound)) {
		return "", err
	}
	p := problemOf(err)
	switch {
	case isStale(err):
		now := "changed"
		if cur, gerr := cp.admin.Store.CampaignGet(r.Context(), bu, draft.CampaignID); gerr == nil {
			now = fmt.Sprintf("%s at version %d", cur.Status, cur.Version)
		}
		d.EditDraft, d.StaleDraft = nil, &draft // the form shows the campaign as it is now
		p = &problem{Status: http.StatusPreconditionFailed, Title: "The campaign changed since you loaded it",
			Detail: fmt.Sprintf("You edited version %d; the campaign is %s now (a save, its budget or another operator changed it). Nothing was saved; the campaign and its form below are as they are now, your draft beside them.", draft.Version, now)}
	case errors.Is(err, store.ErrConflict) || automation.CodeOf(err) == automation.CodeConflict:
		p = &problem{Status: http.StatusConflict, Title: "That campaign exists",
			Detail: fmt.Sprintf("%s is already a campaign of %s. Nothing was saved; open it and edit it there (its version goes with the form).", draft.CampaignID, bu)}
	}
	return cp.refused(r, pc, d, p)
}

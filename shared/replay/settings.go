package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// Settings changes as replay inputs (docs/architecture.md#settings-changes), applied through the same
// management service as the settings API (reminder.Admin), as an operator who read the
// latest version:
//
//	{"at": "…", "settingUpsert": {…a whole reminder setting, with its guid…}}
//	    a new guid creates the setting; a known one replaces it (If-Match = its version)
//	{"at": "…", "settingDeactivate": {"guid": "…"}}
//	    deactivates it: pending rows Deactivated (ReminderSettingInactive), completed kept
//
// Each applied change prints a "setting" line with what happened to the rows; a change the
// service refuses (e.g. a new businessUnitId for an existing setting) prints a "rejected"
// line with settingGuid instead. The setting's own validity is checked when the scenario is
// parsed, like reminderSettings: an invalid one stops the scenario with the field named.

// SettingDeactivate is the body of a settingDeactivate input.
type SettingDeactivate struct {
	Guid string `json:"guid"`
}

// SettingLine is the output line of an applied settings change.
type SettingLine struct {
	Kind               string   `json:"kind"` // "setting"
	At                 string   `json:"at"`
	Input              int      `json:"input"`
	SettingGuid        string   `json:"settingGuid"`
	Version            int64    `json:"version"`
	IsActive           bool     `json:"isActive"`
	Change             []string `json:"change"`
	Status             string   `json:"status"` // propagation: None, Complete, Queued
	RowsDeactivated    int      `json:"rowsDeactivated"`
	RowsEnsured        int      `json:"rowsEnsured"`
	RowsUpdatedInPlace int      `json:"rowsUpdatedInPlace"`
}

var settingGuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// parseSettingInput validates a settingUpsert or settingDeactivate input and fills in.
func parseSettingInput(i int, upsert, deactivate json.RawMessage, buIDs map[string]bool, in *Input) []error {
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf("scenario: "+f, a...)) }
	if len(upsert) > 0 {
		var probe map[string]json.RawMessage
		if json.Unmarshal(upsert, &probe) != nil || probe == nil {
			bad("inputs[%d].settingUpsert must be a JSON object (a reminder setting)", i)
			return errs
		}
		if _, ok := probe["guid"]; !ok {
			bad("inputs[%d].settingUpsert.guid is required (the setting to create or replace)", i)
		}
		set, err := reminder.DecodeSetting(upsert, Channels)
		if err != nil {
			var ae *automation.Error
			if errors.As(err, &ae) && len(ae.Fields) > 0 {
				for _, f := range ae.Fields {
					bad("inputs[%d].settingUpsert.%s: %s", i, f.Field, f.Message)
				}
			} else if errors.As(err, &ae) && ae.Field != "" {
				bad("inputs[%d].settingUpsert.%s: %s", i, ae.Field, ae.Message)
			} else {
				bad("inputs[%d].settingUpsert: %v", i, err)
			}
			return errs
		}
		if !buIDs[set.BusinessUnitID] {
			bad("inputs[%d].settingUpsert.businessUnitId: unknown business unit %q", i, set.BusinessUnitID)
		}
		in.SettingUpsert = upsert
		return errs
	}
	var d SettingDeactivate
	if err := strictDecode(deactivate, &d); err != nil {
		bad("inputs[%d].settingDeactivate: %v", i, err)
		return errs
	}
	if !settingGuidRE.MatchString(d.Guid) {
		bad("inputs[%d].settingDeactivate.guid must be a GUID, got %q", i, d.Guid)
		return errs
	}
	d.Guid = strings.ToLower(d.Guid)
	in.SettingDeactivate = &d
	return errs
}

// settingInput applies a settings-change input through the management service.
func (r *runner) settingInput(ctx context.Context, idx int) error {
	in := r.sc.Inputs[idx]
	all := automation.AllBusinessUnits()
	var (
		res  reminder.SettingResult
		guid string
		err  error
	)
	if in.SettingDeactivate != nil {
		guid = in.SettingDeactivate.Guid
		rec, gerr := r.e.Store.ReminderSettingGet(ctx, guid)
		switch {
		case errors.Is(gerr, store.ErrNotFound):
			err = &automation.Error{Code: automation.CodeNotFound, Message: fmt.Sprintf("reminder setting %s not found", guid)}
		case gerr != nil:
			return fmt.Errorf("inputs[%d]: %w", idx, gerr)
		default:
			res, err = r.e.Admin.DeactivateSetting(ctx, all, guid, rec.Version)
		}
	} else {
		var probe struct {
			Guid string `json:"guid"`
		}
		_ = json.Unmarshal(in.SettingUpsert, &probe)
		guid = strings.ToLower(probe.Guid)
		rec, gerr := r.e.Store.ReminderSettingGet(ctx, guid)
		switch {
		case errors.Is(gerr, store.ErrNotFound):
			res, err = r.e.Admin.CreateSetting(ctx, all, in.SettingUpsert)
		case gerr != nil:
			return fmt.Errorf("inputs[%d]: %w", idx, gerr)
		default:
			res, err = r.e.Admin.UpdateSetting(ctx, all, guid, in.SettingUpsert, rec.Version)
		}
	}
	if err != nil {
		switch automation.CodeOf(err) {
		case automation.CodeInvalidInput, automation.CodeMalformed, automation.CodeNotFound, automation.CodeConflict, automation.CodePreconditionFailed:
			r.rejected++
			return r.enc.Encode(RejectedLine{Kind: "rejected", At: in.At.UTC().Format(time.RFC3339), Input: idx, SettingGuid: guid, Error: err.Error()})
		}
		return fmt.Errorf("inputs[%d]: %w", idx, err)
	}
	p := res.Propagation
	if p == nil {
		p = &reminder.Propagation{Change: []string{}, Status: reminder.PropagationNone}
	}
	return r.enc.Encode(SettingLine{Kind: "setting", At: in.At.UTC().Format(time.RFC3339), Input: idx, SettingGuid: res.Setting.Guid,
		Version: res.Version, IsActive: res.Setting.Active(), Change: p.Change, Status: string(p.Status),
		RowsDeactivated: p.RowsDeactivated, RowsEnsured: p.RowsEnsured, RowsUpdatedInPlace: p.RowsUpdatedInPlace})
}

package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// deadLettersPerPage is the dead letters one page lists (the API's default page).
const deadLettersPerPage = 25

// deadLetterActionsShown is how many recent requeues and discards the page lists.
const deadLetterActionsShown = 20

// DeadLetterPages is the dead-letter page (docs/console.md#dead-letters), added through
// Options.Pages: GET lists the dead letters of every route the caller may see (the
// in-process bus's list, or each Service Bus entity's dead-letter subqueue), filtered by
// business unit and route, oldest first and paged with the one cursor, each with its reason,
// route, delivery count, time and original message (masked where personal); the counts per
// route; and the newest requeues and discards. POST requeues (paced) or discards (with a
// reason) the dead letters ticked, each carrying the ETag it was read with: a repeat
// replays, another message under the same id or a dead letter already acted on the other
// way answers 412 with the list as it is now. Every rule is deadletter.Service's.
func DeadLetterPages(s *deadletter.Service) []Page {
	if s == nil {
		return nil
	}
	return []Page{{Path: "dead-letters", Title: "Dead letters",
		Render: func(r *http.Request, pc PageCall) (template.HTML, error) {
			q := r.URL.Query()
			return deadLettersRender(r.Context(), s, pc, strings.TrimSpace(q.Get("businessUnitId")), strings.TrimSpace(q.Get("destination")),
				q.Get("cursor"), deadLettersPage{})
		},
		Post: func(r *http.Request, pc PageCall) (template.HTML, error) {
			f := r.PostForm
			bu, dest := strings.TrimSpace(f.Get("businessUnitId")), strings.TrimSpace(f.Get("destination"))
			if bu != "" && !pc.Caller.Scope.Allows(bu) {
				return "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
			}
			var refs []deadletter.Ref
			for _, v := range f["ref"] {
				id, etag, _ := strings.Cut(v, " ")
				refs = append(refs, deadletter.Ref{ID: id, ETag: etag})
			}
			req := deadletter.BulkRequest{Refs: refs, Operator: pageOperator(r, pc), Reason: f.Get("reason")}
			var res deadletter.BulkResult
			var err error
			verb := "requeued"
			switch f.Get("do") {
			case "requeue":
				res, err = s.RequeueMany(r.Context(), pc.Caller.Scope, req)
			case "discard":
				verb = "discarded"
				res, err = s.DiscardMany(r.Context(), pc.Caller.Scope, req)
			default:
				return "", automation.Invalid("do", "must be requeue or discard")
			}
			d := deadLettersPage{Form: map[string]string{"reason": f.Get("reason")}}
			if err != nil {
				p := httpapi.ProblemOf(err)
				d.Problem = &problem{Status: p.Status, Title: p.Title, Detail: p.Detail, Fields: p.Errors}
				body, rerr := deadLettersRender(r.Context(), s, pc, bu, dest, "", d)
				if rerr != nil {
					return "", rerr
				}
				return "", &Refused{Status: p.Status, Body: body}
			}
			d.Result = &res
			d.Verb = verb
			d.Form = nil
			var stale []string
			for _, x := range res.Refused {
				if x.Status == automation.CodePreconditionFailed {
					stale = append(stale, x.ID+": "+x.Message)
				}
			}
			if len(stale) > 0 && len(res.Done) == 0 {
				// Nothing was done and the page was stale: 412 with the list as it is now.
				d.Problem = &problem{Status: http.StatusPreconditionFailed, Title: "The dead letters changed since you loaded them",
					Detail: "Nothing was done. " + strings.Join(stale, "; ") + ". The list below is as it is now."}
				body, rerr := deadLettersRender(r.Context(), s, pc, bu, dest, "", d)
				if rerr != nil {
					return "", rerr
				}
				return "", &Refused{Status: http.StatusPreconditionFailed, Body: body}
			}
			return deadLettersRender(r.Context(), s, pc, bu, dest, "", d)
		}}}
}

type deadLettersPage struct {
	BusinessUnitID, Destination string
	Picker                      template.HTML
	Routes                      []deadletter.Count
	Items                       []deadLetterRow
	Next                        string
	Actions                     []store.DeadLetterAudit
	CSRFField                   template.HTML
	Operator                    string
	Pace                        int
	Form                        map[string]string
	Problem                     *problem
	Result                      *deadletter.BulkResult
	Verb                        string
	NoBox                       string
}

type deadLetterRow struct {
	deadletter.Item
	Message string // the original message, indented when JSON
}

func deadLettersRender(ctx context.Context, s *deadletter.Service, pc PageCall, bu, dest, cursor string, d deadLettersPage) (template.HTML, error) {
	if bu != "" && !pc.Caller.Scope.Allows(bu) {
		return "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
	}
	d.BusinessUnitID, d.Destination, d.CSRFField, d.Operator, d.Pace = bu, dest, pc.CSRFField, pc.Caller.Operator, s.RequeuePerMinute
	if d.Pace <= 0 {
		d.Pace = deadletter.DefaultRequeuePerMinute
	}
	var err error
	if d.Picker, err = pc.UnitSelect(ctx, "dl-bu", bu, false); err != nil {
		return "", err
	}
	cq := "console-dead-letters:" + bu + ":" + dest
	var after string
	if cursor != "" {
		if err := httpapi.DecodeCursor(cursor, cq, &after); err != nil {
			return "", err
		}
	}
	items, next, err := s.List(ctx, pc.Caller.Scope, deadletter.ListParams{BusinessUnitID: bu, Destination: dest, After: after, Limit: deadLettersPerPage})
	if errors.Is(err, deadletter.ErrNoBox) {
		d.NoBox = deadletter.ErrNoBox.Error()
		return execute(deadLetterTemplate, "deadLetters", d)
	}
	if err != nil {
		return "", err
	}
	for _, it := range items {
		row := deadLetterRow{Item: it, Message: it.BodyText}
		if len(it.Body) > 0 {
			var v any
			if json.Unmarshal(it.Body, &v) == nil {
				b, _ := json.MarshalIndent(v, "", "  ")
				row.Message = string(b)
			}
		}
		d.Items = append(d.Items, row)
	}
	if next != "" {
		cur, err := httpapi.EncodeCursor(cq, next)
		if err != nil {
			return "", err
		}
		d.Next = fmt.Sprintf("%s/dead-letters?businessUnitId=%s&destination=%s&cursor=%s", Base, urlQuery(bu), urlQuery(dest), urlQuery(cur))
	}
	if d.Routes, err = s.Counts(ctx, pc.Caller.Scope); err != nil {
		return "", err
	}
	if d.Actions, err = s.Actions(ctx, pc.Caller.Scope, deadLetterActionsShown); err != nil {
		return "", err
	}
	return execute(deadLetterTemplate, "deadLetters", d)
}

var deadLetterTemplate = template.Must(template.New("deadLetters").Funcs(funcs).Parse(`{{define "deadLetters"}}
<p class="help">Messages a route gave up on (after its retries, or refused as they are: an unknown business unit, an event type not in the registry), with the reason and the original message, personal data masked. Fix the cause, then requeue them: each goes back on its route as a first delivery. Or discard one that must not be delivered, with the reason. Every action is audited, taken once per dead letter, and requeues are paced: at most {{.Pace}} a minute.</p>
{{with .NoBox}}<p class="alert notice" id="no-box">{{.}}</p>{{else}}
{{with .Problem}}<div class="alert error" role="alert" id="dl-problem"><h2>{{.Title}}{{if .Status}} ({{.Status}}){{end}}</h2>{{with .Detail}}<p>{{.}}</p>{{end}}
{{if .Fields}}<ul>{{range .Fields}}<li><strong>{{.Field}}</strong>: {{.Message}}</li>{{end}}</ul>{{end}}</div>{{end}}
{{with .Result}}<div class="alert notice" role="status" id="dl-notice"><p>{{len .Done}} {{$.Verb}} (batch {{.BatchID}}){{range .Done}}{{if .Replayed}}; {{.DeadLetter.ID}} had been {{$.Verb}} already by {{.Operator}} at {{when .ActedOn}}, nothing was done again{{end}}{{end}}.{{if .Deferred}} {{len .Deferred}} deferred by the pace ({{.RatePerMinute}} a minute): requeue them again after {{when .NextOn}}.{{end}}{{range .Refused}} {{.ID}} refused: {{.Message}}.{{end}}</p></div>{{end}}
<form method="get" class="filters" aria-label="Filter dead letters">
<div>{{.Picker}}</div>
<div><label for="dl-route">Route</label><select id="dl-route" name="destination"><option value="">Every route</option>{{range .Routes}}{{if .Destination}}<option value="{{.Destination}}"{{if eq .Destination $.Destination}} selected{{end}}>{{.Destination}}</option>{{end}}{{end}}</select></div>
<div><button type="submit">Show</button></div></form>
<div class="scroll"><table id="dl-routes"><caption>Dead letters per route</caption>
<thead><tr><th scope="col">Route</th><th scope="col">Listed</th><th scope="col">Dropped from the list</th></tr></thead>
<tbody>{{range .Routes}}<tr><th scope="row">{{if .Destination}}{{.Destination}}{{else}}(past the count bound){{end}}</th><td>{{.Count}}</td><td>{{.Evicted}}</td></tr>{{else}}<tr><td colspan="3">No dead letters.</td></tr>{{end}}</tbody></table></div>
<h2 id="dl-list-h">Dead letters</h2>
{{if .Items}}<form method="post" id="dl-form" aria-labelledby="dl-list-h">{{.CSRFField}}
<input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}"><input type="hidden" name="destination" value="{{.Destination}}">
<div class="scroll"><table id="dead-letters"><caption>Oldest first{{with .BusinessUnitID}} · {{.}}{{end}}{{with .Destination}} · {{.}}{{end}}</caption>
<thead><tr><th scope="col">Select</th><th scope="col">Id</th><th scope="col">Route</th><th scope="col">Business unit</th><th scope="col">Reason</th><th scope="col">Deliveries</th><th scope="col">Dead-lettered (UTC)</th><th scope="col">Message</th></tr></thead>
<tbody>{{range .Items}}<tr id="dl-{{.ID}}"><td><input type="checkbox" name="ref" value="{{.ID}} {{.ETag}}" id="pick-{{.ID}}" aria-label="Select dead letter {{.ID}}"></td>
<td><label for="pick-{{.ID}}" class="key">{{.ID}}</label></td><td>{{.Destination}}</td><td>{{with .BusinessUnitID}}{{.}}{{else}}—{{end}}</td><td>{{.Reason}}</td><td>{{.DeliveryCount}}</td><td>{{when .DeadLetteredOn}}</td>
<td><details><summary>{{.MessageID}}</summary><pre class="scroll" tabindex="0">{{.Message}}</pre></details></td></tr>
{{end}}</tbody></table></div>
<div class="card narrow">
<label for="dl-op">Operator</label><input id="dl-op" name="operator" value="{{.Operator}}" required autocomplete="name"{{if .Operator}} readonly{{end}}>
<label for="dl-reason">Reason</label><textarea id="dl-reason" name="reason" required rows="2" maxlength="1000">{{with .Form}}{{index . "reason"}}{{end}}</textarea>
<button type="submit" name="do" value="requeue" id="dl-requeue">Requeue selected</button>
<button type="submit" name="do" value="discard" id="dl-discard">Discard selected</button>
</div></form>
{{with .Next}}<p><a href="{{.}}" id="dl-next">Next page</a></p>{{end}}
{{else}}<p id="dead-letters">No dead letters{{with .BusinessUnitID}} of {{.}}{{end}}{{with .Destination}} on {{.}}{{end}}.</p>{{end}}
<h2>Recent actions</h2>
<div class="scroll"><table id="dl-actions"><caption>The newest requeues and discards (the audit)</caption>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">Action</th><th scope="col">Dead letter</th><th scope="col">Route</th><th scope="col">Operator</th><th scope="col">Reason</th><th scope="col">Batch</th></tr></thead>
<tbody>{{range .Actions}}<tr><td>{{when .ActedOn}}</td><td>{{.Action}}</td><td>{{.DeadLetterID}} · {{.MessageID}}</td><td>{{.Destination}}</td><td>{{.Operator}}</td><td>{{.Reason}}</td><td>{{.BatchID}}</td></tr>{{else}}<tr><td colspan="7">None yet.</td></tr>{{end}}</tbody></table></div>
{{end}}{{end}}`))

func urlQuery(s string) string { return template.URLQueryEscaper(s) }

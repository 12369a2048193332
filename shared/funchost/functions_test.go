package funchost_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/funchost/funchosttest"
)

// TestFunctionFolders checks the app's function folders: every folder present has exactly
// one trigger, an "in" binding with a valid name; timers run with runOnStartup false and
// useMonitor true; Service Bus triggers use the ServiceBusConnection setting and the default
// (string) dataType, or "string" said explicitly when the trigger is "cardinality": "many". Which functions exist, with which names, queues and topics, is the
// topology table's test (shared/topology).
func TestFunctionFolders(t *testing.T) {
	t.Parallel()
	defs := funchosttest.Folders(t, "../../functions")
	bindingName := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,127}$`)
	for _, d := range defs {
		triggers := 0
		for _, b := range d.Bindings {
			if b.IsTrigger() {
				triggers++
			}
		}
		if triggers != 1 || !bindingName.MatchString(d.Trigger.Name) || d.Trigger.Direction != "in" {
			t.Errorf("%s: %d triggers, trigger %+v", d.Name, triggers, d.Trigger)
		}
		tr := d.Trigger
		switch tr.Type {
		case funchost.TriggerTimer:
			if tr.RunOnStartup || tr.UseMonitor == nil || !*tr.UseMonitor {
				t.Errorf("%s: timers run with runOnStartup false and useMonitor true: %+v", d.Name, tr)
			}
		case funchost.TriggerServiceBus:
			// A batch trigger must say "string" (the host binds object[] without it, and a
			// custom handler never receives the batch: azure-functions-host#6487); a single
			// message keeps the default, which is string.
			want := funchost.DataType("")
			if tr.Cardinality == funchost.CardinalityMany {
				want = funchost.DataTypeString
			}
			if tr.Connection != "ServiceBusConnection" || tr.DataType != want {
				t.Errorf("%s: want connection ServiceBusConnection and dataType %q (cardinality %q): %+v", d.Name, want, tr.Cardinality, tr)
			}
		}
		if filepath.Base(d.Dir) != d.Name {
			t.Errorf("%s: Dir %s", d.Name, d.Dir)
		}
	}
}

func TestLoadFunctionFoldersRejects(t *testing.T) {
	t.Parallel()
	timer := `{"name":"timer","type":"timerTrigger","direction":"in","schedule":"0 * * * * *"}`
	cases := map[string]struct{ folder, json, want string }{
		"invalid JSON":       {"Job", `{"bindings":[`, "invalid JSON"},
		"no bindings":        {"Job", `{"bindings":[]}`, "no bindings"},
		"two triggers":       {"Job", `{"bindings":[` + timer + `,{"name":"t2","type":"timerTrigger","direction":"in","schedule":"x"}]}`, "exactly one trigger"},
		"no trigger":         {"Job", `{"bindings":[{"name":"out","type":"serviceBus","direction":"out","queueName":"q"}]}`, "exactly one trigger"},
		"bad binding name":   {"Job", `{"bindings":[{"name":"my-timer","type":"timerTrigger","direction":"in","schedule":"x"}]}`, "invalid binding name"},
		"duplicate binding":  {"Job", `{"bindings":[` + timer + `,{"name":"Timer","type":"serviceBus","direction":"out","queueName":"q"}]}`, "duplicate binding name"},
		"missing type":       {"Job", `{"bindings":[{"name":"x","direction":"in"}]}`, "no type"},
		"trigger direction":  {"Job", `{"bindings":[{"name":"timer","type":"timerTrigger","direction":"out","schedule":"x"}]}`, "direction"},
		"timer no schedule":  {"Job", `{"bindings":[{"name":"timer","type":"timerTrigger","direction":"in"}]}`, "no schedule"},
		"queue and topic":    {"Job", `{"bindings":[{"name":"m","type":"serviceBusTrigger","direction":"in","queueName":"q","topicName":"t","subscriptionName":"s"}]}`, "exclusive"},
		"topic without sub":  {"Job", `{"bindings":[{"name":"m","type":"serviceBusTrigger","direction":"in","topicName":"t"}]}`, "subscriptionName"},
		"no entity":          {"Job", `{"bindings":[{"name":"m","type":"serviceBusTrigger","direction":"in"}]}`, "no queueName"},
		"bad cardinality":    {"Job", `{"bindings":[{"name":"m","type":"serviceBusTrigger","direction":"in","queueName":"q","cardinality":"several"}]}`, "cardinality"},
		"unknown dataType":   {"Job", `{"bindings":[{"name":"m","type":"serviceBusTrigger","direction":"in","queueName":"q","dataType":"text"}]}`, "dataType"},
		"many, no dataType":  {"Job", `{"bindings":[{"name":"m","type":"serviceBusTrigger","direction":"in","queueName":"q","cardinality":"many"}]}`, "needs dataType"},
		"many, stream":       {"Job", `{"bindings":[{"name":"m","type":"serviceBusTrigger","direction":"in","queueName":"q","cardinality":"many","dataType":"stream"}]}`, "needs dataType"},
		"invalid folder":     {"1Job", `{"bindings":[` + timer + `]}`, "invalid function name"},
		"reserved folder":    {"host", `{"bindings":[` + timer + `]}`, "invalid function name"},
		"folder with a dot":  {"Job.v2", `{"bindings":[` + timer + `]}`, "invalid function name"},
		"bindings not array": {"Job", `{"bindings":{}}`, "invalid JSON"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, tc.folder), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.folder, "function.json"), []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := funchost.LoadFunctionFolders(dir)
			var fe *funchost.FunctionConfigError
			if !errors.As(err, &fe) || fe.Function != tc.folder || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a FunctionConfigError for %s containing %q", err, tc.folder, tc.want)
			}
		})
	}
}

func TestLoadFunctionFoldersSkipsNonFunctions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"Job", "notes", ".hidden"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Job/function.json", `{"disabled":true,"bindings":[{"name":"timer","type":"timerTrigger","direction":"in","schedule":"%S%","retry":{"strategy":"fixedDelay"}},{"name":"out","type":"serviceBus","direction":"out","queueName":"q"}]}`)
	write(".hidden/function.json", `not json`)
	write("main.go", `package main`)
	defs, err := funchost.LoadFunctionFolders(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || defs[0].Name != "Job" || !defs[0].Disabled || len(defs[0].Bindings) != 2 || defs[0].Trigger.Schedule != "%S%" {
		t.Fatalf("%+v", defs)
	}
	if _, err := funchost.LoadFunctionFolders(filepath.Join(dir, "nope")); err == nil {
		t.Fatal("missing directory must fail")
	}
}

func TestResolveSetting(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DueWorkSchedule": "*/30 * * * * *", "Q": "due-work"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	ok := map[string]string{
		"%DueWorkSchedule%": "*/30 * * * * *",
		"0 0 * * * *":       "0 0 * * * *",
		"prefix-%Q%-suffix": "prefix-due-work-suffix",
		"%Q%%Q%":            "due-workdue-work",
	}
	for in, want := range ok {
		if got, err := funchost.ResolveSetting(in, lookup); err != nil || got != want {
			t.Errorf("ResolveSetting(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"%Missing%", "%Q", "%%", "a % b"} {
		if got, err := funchost.ResolveSetting(in, lookup); err == nil {
			t.Errorf("ResolveSetting(%q) = %q, want an error", in, got)
		}
	}
}

package funchost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// FunctionFile is the file the host reads in each function folder.
const FunctionFile = "function.json"

// Trigger binding types used by this app.
const (
	TriggerTimer      = "timerTrigger"
	TriggerServiceBus = "serviceBusTrigger"
	TriggerHTTP       = "httpTrigger"
)

// FunctionDef is one function folder: its name (the folder name, which is also the path
// the host POSTs to) and its bindings from function.json.
type FunctionDef struct {
	Name     string
	Dir      string
	Disabled bool
	// Trigger is the single trigger binding (also present in Bindings).
	Trigger  BindingDef
	Bindings []BindingDef
}

// BindingDef is one entry of function.json's "bindings" (docs/functions-protocol.md#timer-trigger, docs/functions-protocol.md#service-bus-trigger, docs/functions-protocol.md#http-trigger). Fields that do not
// apply to the binding's type are zero.
type BindingDef struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Direction   string   `json:"direction"`
	DataType    DataType `json:"dataType,omitempty"`
	Cardinality string   `json:"cardinality,omitempty"`

	// timerTrigger
	Schedule     string `json:"schedule,omitempty"` // NCRONTAB or %AppSetting%
	RunOnStartup bool   `json:"runOnStartup,omitempty"`
	UseMonitor   *bool  `json:"useMonitor,omitempty"` // nil: host default

	// serviceBusTrigger / serviceBus
	QueueName         string `json:"queueName,omitempty"`
	TopicName         string `json:"topicName,omitempty"`
	SubscriptionName  string `json:"subscriptionName,omitempty"`
	Connection        string `json:"connection,omitempty"`
	IsSessionsEnabled bool   `json:"isSessionsEnabled,omitempty"`

	// httpTrigger
	AuthLevel string   `json:"authLevel,omitempty"`
	Methods   []string `json:"methods,omitempty"`
	Route     string   `json:"route,omitempty"`
}

// IsTrigger reports whether b is a trigger binding (its type ends in "Trigger").
func (b BindingDef) IsTrigger() bool {
	return strings.HasSuffix(strings.ToLower(b.Type), "trigger")
}

// ResolveSetting expands %Name% references in s (function.json's app-setting syntax, e.g.
// "%DueWorkSchedule%") with lookup. It fails on an unknown setting or a lone '%'.
func ResolveSetting(s string, lookup func(name string) (string, bool)) (string, error) {
	var out strings.Builder
	for {
		i := strings.IndexByte(s, '%')
		if i < 0 {
			out.WriteString(s)
			return out.String(), nil
		}
		j := strings.IndexByte(s[i+1:], '%')
		if j < 0 {
			return "", fmt.Errorf("funchost: unterminated %%setting%% in %q", s)
		}
		name := s[i+1 : i+1+j]
		v, ok := lookup(name)
		if !ok || name == "" {
			return "", fmt.Errorf("funchost: app setting %q is not set", name)
		}
		out.WriteString(s[:i])
		out.WriteString(v)
		s = s[i+2+j:]
	}
}

// FunctionConfigError reports an invalid function folder.
type FunctionConfigError struct {
	Function string // folder name
	Path     string // path of function.json
	Err      error
}

func (e *FunctionConfigError) Error() string {
	return fmt.Sprintf("funchost: function %q (%s): %v", e.Function, e.Path, e.Err)
}

func (e *FunctionConfigError) Unwrap() error { return e.Err }

// bindingNameRE is the host's binding name rule (Utility.ValidateBinding).
var bindingNameRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]{0,127}|\$return)$`)

// LoadFunctionFolders reads dir/*/function.json, sorted by function name. Folders without
// a function.json are not functions and are skipped. Each function must have a valid
// name, valid and unique binding names, and exactly one trigger, an "in" binding, with
// the settings its type needs (a schedule; a queue, or a topic and a subscription; a
// "many" Service Bus trigger also its dataType, string or binary).
func LoadFunctionFolders(dir string) ([]FunctionDef, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("funchost: reading function folders: %w", err)
	}
	var defs []FunctionDef
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name(), FunctionFile)
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &FunctionConfigError{Function: e.Name(), Path: path, Err: err}
		}
		def, err := parseFunction(e.Name(), raw)
		if err != nil {
			return nil, &FunctionConfigError{Function: e.Name(), Path: path, Err: err}
		}
		def.Dir = filepath.Join(dir, e.Name())
		defs = append(defs, def)
	}
	return defs, nil
}

func parseFunction(name string, raw []byte) (FunctionDef, error) {
	if !functionNameRE.MatchString(name) || strings.EqualFold(name, "host") {
		return FunctionDef{}, errors.New("invalid function name (letters, digits, '_' and '-', starting with a letter)")
	}
	var file struct {
		Disabled bool         `json:"disabled"`
		Bindings []BindingDef `json:"bindings"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return FunctionDef{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if len(file.Bindings) == 0 {
		return FunctionDef{}, errors.New("no bindings")
	}
	def := FunctionDef{Name: name, Disabled: file.Disabled, Bindings: file.Bindings}
	seen := map[string]bool{}
	triggers := 0
	for i, b := range file.Bindings {
		if !bindingNameRE.MatchString(b.Name) {
			return FunctionDef{}, fmt.Errorf("bindings[%d]: invalid binding name %q", i, b.Name)
		}
		if seen[strings.ToLower(b.Name)] {
			return FunctionDef{}, fmt.Errorf("bindings[%d]: duplicate binding name %q", i, b.Name)
		}
		seen[strings.ToLower(b.Name)] = true
		if b.Type == "" {
			return FunctionDef{}, fmt.Errorf("bindings[%d] %q: no type", i, b.Name)
		}
		switch b.DataType {
		case "", DataTypeString, DataTypeBinary, "stream":
		default:
			return FunctionDef{}, fmt.Errorf("bindings[%d] %q: unknown dataType %q", i, b.Name, b.DataType)
		}
		if b.IsTrigger() {
			triggers++
			def.Trigger = b
		}
	}
	if triggers != 1 {
		return FunctionDef{}, fmt.Errorf("want exactly one trigger binding, found %d", triggers)
	}
	t := def.Trigger
	if t.Direction != "in" {
		return FunctionDef{}, fmt.Errorf("trigger %q: direction must be \"in\", got %q", t.Name, t.Direction)
	}
	switch t.Type {
	case TriggerTimer:
		if strings.TrimSpace(t.Schedule) == "" {
			return FunctionDef{}, fmt.Errorf("timer trigger %q: no schedule", t.Name)
		}
	case TriggerServiceBus:
		queue, topic := t.QueueName != "", t.TopicName != "" || t.SubscriptionName != ""
		switch {
		case queue && topic:
			return FunctionDef{}, fmt.Errorf("service bus trigger %q: queueName and topicName/subscriptionName are exclusive", t.Name)
		case topic && (t.TopicName == "" || t.SubscriptionName == ""):
			return FunctionDef{}, fmt.Errorf("service bus trigger %q: topicName needs subscriptionName", t.Name)
		case !queue && !topic:
			return FunctionDef{}, fmt.Errorf("service bus trigger %q: no queueName or topicName", t.Name)
		}
		if t.Cardinality != "" && t.Cardinality != CardinalityOne && t.Cardinality != CardinalityMany {
			return FunctionDef{}, fmt.Errorf("service bus trigger %q: cardinality %q is neither \"one\" nor \"many\"", t.Name, t.Cardinality)
		}
		if t.Cardinality == CardinalityMany && t.DataType != DataTypeString && t.DataType != DataTypeBinary {
			return FunctionDef{}, fmt.Errorf("service bus trigger %q: cardinality \"many\" needs dataType \"string\" (or \"binary\"), got %q: "+
				"without it the host binds object[], which fails for a custom handler (docs/functions-protocol.md#service-bus-batches)", t.Name, t.DataType)
		}
	}
	return def, nil
}

// The cardinality of a Service Bus trigger (function.json "cardinality"): one message per
// invocation (the default), or the messages the host hands over at once (DecodeServiceBusBatch).
const (
	CardinalityOne  = "one"
	CardinalityMany = "many"
)

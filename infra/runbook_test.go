package infra_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	secureParamRE = regexp.MustCompile(`(?m)^@secure\(\)\s*\nparam\s+([A-Za-z0-9_]+)\s`)
	envReadRE     = regexp.MustCompile(`readEnvironmentVariable\('([A-Z0-9_]+)'`)
)

// Every secret parameter of main.bicep is declared in each .bicepparam file, read from the
// environment with an empty default: a value passed with -p beside a .bicepparam may be
// ignored, and a missing variable must mean "none", not a failed compile.
func TestRunbookSecretsAreDeclaredInParamFiles(t *testing.T) {
	t.Parallel()
	secrets := secureParamRE.FindAllStringSubmatch(readText(t, "main.bicep"), -1)
	if len(secrets) < 4 {
		t.Fatalf("only %d @secure() params found in main.bicep", len(secrets))
	}
	for _, file := range []string{"parameters/dev.bicepparam", "parameters/prod.bicepparam"} {
		params := readText(t, file)
		for _, m := range secrets {
			re := regexp.MustCompile(`(?m)^param ` + m[1] + ` = readEnvironmentVariable\('[A-Z0-9_]+', ''\)$`)
			if !re.MatchString(params) {
				t.Errorf("%s: secret parameter %s is not declared as readEnvironmentVariable('…', '')", file, m[1])
			}
		}
	}
}

// runbookSection returns the text of docs/deploy.md before the heading that starts with
// prefix.
func runbookBefore(t *testing.T, md, prefix string) string {
	t.Helper()
	i := strings.Index(md, "\n"+prefix)
	if i < 0 {
		t.Fatalf("docs/deploy.md: no heading %q", prefix)
	}
	return md[:i]
}

// Every environment variable the .bicepparam files read is exported in docs/deploy.md before
// step 1 compiles them (az bicep build-params reads the environment too), and the runbook
// exports nothing the files do not read.
func TestRunbookExportsBeforeStep1(t *testing.T) {
	t.Parallel()
	md := readText(t, "../docs/deploy.md")
	before := runbookBefore(t, md, "## 1. ")
	if !strings.Contains(md[len(before):], "az bicep build-params") {
		t.Fatal("step 1 no longer compiles the .bicepparam file")
	}
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^export ((?:[A-Z0-9_]+=\S*\s*)+)`).FindAllStringSubmatch(before, -1) {
		for _, kv := range regexp.MustCompile(`([A-Z0-9_]+)=`).FindAllStringSubmatch(m[1], -1) {
			exported[kv[1]] = true
		}
	}
	read := map[string]bool{}
	for _, file := range []string{"parameters/dev.bicepparam", "parameters/prod.bicepparam"} {
		for _, m := range envReadRE.FindAllStringSubmatch(readText(t, file), -1) {
			read[m[1]] = true
			if !exported[m[1]] {
				t.Errorf("%s reads %s, which docs/deploy.md does not export before step 1", file, m[1])
			}
		}
	}
	for name := range exported {
		if !read[name] {
			t.Errorf("docs/deploy.md exports %s before step 1, which no .bicepparam reads", name)
		}
	}
}

// deployCommands returns the `az deployment group <verb>` commands of a Markdown file, with
// continuation lines joined, as [verb, arguments].
func deployCommands(md string) [][2]string {
	joined := strings.ReplaceAll(md, "\\\n", " ")
	var out [][2]string
	for _, m := range regexp.MustCompile(`az deployment group (what-if|create) ([^\n]*)`).FindAllStringSubmatch(joined, -1) {
		out = append(out, [2]string{m[1], strings.Join(strings.Fields(m[2]), " ")})
	}
	return out
}

// In docs/deploy.md and infra/README.md, every create runs right after a what-if with the
// same arguments, and no command passes a parameter with -p name=value beside the
// .bicepparam file (only the file itself).
func TestRunbookWhatIfMatchesCreate(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"../docs/deploy.md", "README.md"} {
		cmds := deployCommands(readText(t, doc))
		creates := 0
		for i, c := range cmds {
			for _, p := range regexp.MustCompile(`-p\s+(\S+)`).FindAllStringSubmatch(c[1], -1) {
				if !strings.HasSuffix(p[1], ".bicepparam") {
					t.Errorf("%s: `az deployment group %s %s` passes %q beside the .bicepparam file", doc, c[0], c[1], p[1])
				}
			}
			if c[0] != "create" {
				continue
			}
			creates++
			if i == 0 || cmds[i-1][0] != "what-if" || cmds[i-1][1] != c[1] {
				t.Errorf("%s: `create %s` is not preceded by a what-if with the same arguments", doc, c[1])
			}
		}
		if creates == 0 {
			t.Errorf("%s: no az deployment group create found", doc)
		}
	}
}

// The files the runbook's commands name exist (the smoke check's scenario was once a
// placeholder), and its HTTP step creates a business unit before the Service Bus step
// publishes an event for it.
func TestRunbookSmokeChecks(t *testing.T) {
	t.Parallel()
	md := readText(t, "../docs/deploy.md")
	paths := 0
	for _, span := range codeSpans(md) {
		for _, m := range regexp.MustCompile(`(testdata/[A-Za-z0-9_./-]+\.json)`).FindAllStringSubmatch(span, -1) {
			paths++
			if _, err := os.Stat("../" + m[1]); err != nil {
				t.Errorf("docs/deploy.md names %s: %v", m[1], err)
			}
		}
	}
	if paths < 2 {
		t.Errorf("docs/deploy.md names %d testdata files; the smoke checks need a setting and an event", paths)
	}
	smoke := md[strings.Index(md, "## 7. Smoke checks"):]
	bu, pub := strings.Index(smoke, "/api/business-units"), strings.Index(smoke, "bin/automation publish")
	if bu < 0 || pub < 0 || bu > pub {
		t.Error("docs/deploy.md step 7: a business unit must be created in Azure before the Service Bus event is published")
	}
	if !strings.Contains(readText(t, "modules/roles.bicep"), "principalId: operatorPrincipalId") {
		t.Error("nothing grants the operator who publishes the smoke event Azure Service Bus Data Sender")
	}
}

// The Elastic Premium fallback deploys a plan and an app of its own (a Flex app cannot
// become an Elastic Premium one in place), and the runbook says so.
func TestPlanNamesCarryThePlanKind(t *testing.T) {
	t.Parallel()
	main := readText(t, "main.bicep")
	for _, want := range []string{
		"plan: planKind == 'FlexConsumption' ? 'plan-automation-${env}' : 'plan-automation-${env}-ep'",
		"functionApp: planKind == 'FlexConsumption' ? 'func-automation-${env}-${take(token, 6)}' : 'func-automation-${env}-ep-${take(token, 6)}'",
	} {
		if !strings.Contains(main, want) {
			t.Errorf("main.bicep lacks %q", want)
		}
	}
	for _, file := range []string{"parameters/dev.bicepparam", "parameters/prod.bicepparam"} {
		if !strings.Contains(readText(t, file), "param planKind = readEnvironmentVariable('PLAN_KIND', 'FlexConsumption')") {
			t.Errorf("%s: planKind does not come from PLAN_KIND", file)
		}
	}
	if !strings.Contains(readText(t, "../docs/deploy.md"), "export PLAN_KIND=ElasticPremium") {
		t.Error("docs/deploy.md: the fallback does not switch PLAN_KIND")
	}
}

// Text that was true once and is not: the start-up limit (30 s on every plan, the host's
// HttpWorkerOptions.InitializationTimeout), the tracking topic (deployed), the Flex runtime
// hedge (Flex offers custom 1.0), the custom scale-reader role (removed).
func TestDeployDocsHaveNoStaleText(t *testing.T) {
	t.Parallel()
	// The start-up comments of the handler live in the repository's shared/ tree.
	for _, doc := range []string{"../docs/deploy.md", "README.md", "../README.md", "../docs/functions-protocol.md",
		filepath.Join("..", "shared", "app", "handler.go"), filepath.Join("..", "shared", "funchost", "gate.go")} {
		text := readText(t, doc)
		for _, stale := range []string{"60 s", "is not deployed", "reported as partial", "grantServiceBusScaleReader", "scale reader"} {
			if strings.Contains(text, stale) {
				t.Errorf("%s still says %q", doc, stale)
			}
		}
	}
	// The deployed topics are listed in the resource table.
	readme := readText(t, "README.md")
	for _, topic := range []string{"domain-events", "delivery-facts", "events", "tracking", "noti", "campaign-facts", "campaign-fee-facts"} {
		if !slices.ContainsFunc(strings.Split(readme, "\n"), func(l string) bool { return strings.Contains(l, "| ├ topic `"+topic+"`") }) {
			t.Errorf("infra/README.md's resource table lacks the topic %s", topic)
		}
	}
}

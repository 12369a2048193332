package console_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// axeScript reads axe-core from node_modules (package.json pins it; npm ci installs it, as
// make test does). Without it the browser test fails: an accessibility check that did not
// run must not pass.
func axeScript(t *testing.T) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "node_modules", "axe-core", "axe.min.js")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("axe-core is not installed (%v): run npm ci in the repository (package.json pins it)", err)
	}
	return string(b)
}

// axeViolation is one rule axe-core found broken, with the elements that break it.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// axeRun runs axe-core on the document against WCAG 2.0, 2.1 and 2.2 A and AA and answers
// its violations (rule, impact, help, the CSS selectors of the elements).
const axeRun = `axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}, resultTypes: ["violations"]})
  .then(r => r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, targets: v.nodes.map(n => n.target.join(" "))})))`

// wordsBroken answers the words of sel's text that the layout breaks across lines: a word
// whose characters do not all sit on one line box.
func wordsBroken(sel string) string {
	return fmt.Sprintf(`(() => {
  const el = document.querySelector(%q); if (!el) return ["(no element)"];
  const out = [];
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const re = /[^\s/·()]+/g; let m;
    while ((m = re.exec(n.data)) !== null) {
      const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
      if (tops.size > 1) out.push(m[0]);
    }
  }
  return out; })()`, sel)
}

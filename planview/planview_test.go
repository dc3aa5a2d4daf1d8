package planview_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/atollhq/atoll/planview"
	"github.com/atollhq/atoll/planview/plantest"
)

// The secrets of the fixture: the prior state holds oldSecret, the plan
// newSecret. Neither may appear in anything planview returns.
const (
	oldSecret = "OLD-hunter2-secret"
	newSecret = "NEW-s3cr3t-value"
)

const module = `
variable "v" {}
resource "terraform_data" "x" { input = var.v }
`

func mainTF(v2 bool) string {
	tf := `
variable "secret" {
  type      = string
  sensitive = true
}
variable "name" { type = string }

resource "terraform_data" "keep" { input = "same" }

resource "terraform_data" "upd" {
  input = { name = var.name, password = var.secret, tags = ["x", "y"] }
}

resource "terraform_data" "rep" {
  input            = "same"
  triggers_replace = var.name
}

resource "terraform_data" "cbd" {
  triggers_replace = var.name
  lifecycle { create_before_destroy = true }
}

module "m" {
  source = "./m"
  v      = var.name
}

output "pw" {
  value     = var.secret
  sensitive = true
}
output "plain" { value = var.name }
output "fixed" { value = "constant" }
`
	if v2 {
		return tf + `
resource "terraform_data" "new" { input = var.secret }
output "added" { value = terraform_data.new.id }
`
	}
	return tf + `resource "terraform_data" "gone" { input = "bye" }` + "\n"
}

// fixture is real `terraform show -json` of a plan with every action, a
// module, a sensitive variable in resources and an output, and unknowns.
func fixture(t *testing.T) (*planview.Plan, []byte, string) {
	t.Helper()
	show, text := plantest.ShowJSON(t,
		plantest.Step{Files: map[string]string{"main.tf": mainTF(false), "m/main.tf": module},
			Vars: map[string]string{"secret": oldSecret, "name": "one"}, Apply: true},
		plantest.Step{Files: map[string]string{"main.tf": mainTF(true)},
			Vars: map[string]string{"secret": newSecret, "name": "two"}},
	)
	// The premise of the redaction tests: Terraform keeps both secrets in
	// its JSON.
	for _, s := range []string{oldSecret, newSecret} {
		if !strings.Contains(string(show), s) {
			t.Fatalf("fixture: terraform's JSON lacks %q; the redaction tests would prove nothing", s)
		}
	}
	p, err := planview.Parse(show)
	if err != nil {
		t.Fatal(err)
	}
	return p, show, text
}

// TestParse runs Terraform once and checks its output from every side.
func TestParse(t *testing.T) {
	p, _, planText := fixture(t)
	t.Run("resources", func(t *testing.T) { testResources(t, p) })
	t.Run("attributes", func(t *testing.T) { testAttributes(t, p) })
	t.Run("outputs", func(t *testing.T) { testOutputs(t, p) })
	t.Run("redaction", func(t *testing.T) { testRedaction(t, p, planText) })
}

func testResources(t *testing.T, p *planview.Plan) {
	byAddr := map[string]planview.Resource{}
	for _, r := range p.Resources {
		byAddr[r.Address] = r
	}
	for _, tc := range []struct {
		addr, action, symbol, module string
		changed                      []string // names of the changed top-level attributes
	}{
		{"terraform_data.keep", "no-op", "", "", nil},
		{"terraform_data.upd", "update", "~", "", []string{"input", "output"}},
		{"terraform_data.gone", "delete", "-", "", []string{"id", "input", "output"}},
		{"terraform_data.new", "create", "+", "", []string{"id", "input", "output"}},
		{"terraform_data.rep", "replace", "-/+", "", []string{"id", "output", "triggers_replace"}},
		{"terraform_data.cbd", "replace", "+/-", "", []string{"id", "triggers_replace"}}, // no input: its output stays null
		{"module.m.terraform_data.x", "update", "~", "module.m", []string{"input", "output"}},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			r, ok := byAddr[tc.addr]
			if !ok {
				t.Fatalf("no change for %s in %v", tc.addr, p.Resources)
			}
			if r.Action != tc.action || r.Symbol != tc.symbol || r.ModuleAddress != tc.module {
				t.Errorf("action %q symbol %q module %q, want %q %q %q", r.Action, r.Symbol, r.ModuleAddress, tc.action, tc.symbol, tc.module)
			}
			var names []string
			for _, a := range r.ChangedAttrs() {
				names = append(names, a.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.changed, ",") {
				t.Errorf("changed attributes %v, want %v", names, tc.changed)
			}
			if r.Changed() != (tc.action != "no-op") {
				t.Errorf("Changed() = %v", r.Changed())
			}
		})
	}
	if len(p.Resources) != 7 {
		t.Errorf("%d resource changes, want 7", len(p.Resources))
	}
}

// attr finds a resource's attribute by dotted path.
func attr(t *testing.T, p *planview.Plan, addr, path string) planview.Attr {
	t.Helper()
	for _, r := range p.Resources {
		if r.Address != addr {
			continue
		}
		as := r.Attributes
		var found planview.Attr
		for _, name := range strings.Split(path, ".") {
			ok := false
			for _, a := range as {
				if a.Name == name {
					found, as, ok = a, a.Children, true
					break
				}
			}
			if !ok {
				t.Fatalf("%s has no attribute %s", addr, path)
			}
		}
		return found
	}
	t.Fatalf("no resource %s", addr)
	return planview.Attr{}
}

func text(v *planview.Value) string {
	if v == nil {
		return "<absent>"
	}
	return v.Text
}

func testAttributes(t *testing.T, p *planview.Plan) {
	for _, tc := range []struct {
		addr, path, change, before, after string
		sensitive, unknown, replaces      bool
	}{
		// A nested object is diffed attribute by attribute.
		{"terraform_data.upd", "input.name", "update", `"one"`, `"two"`, false, false, false},
		{"terraform_data.upd", "input.tags", "same", "[\n  \"x\",\n  \"y\"\n]", "[\n  \"x\",\n  \"y\"\n]", false, false, false},
		// A sensitive value that changes is an update shown as markers.
		{"terraform_data.upd", "input.password", "update", "(sensitive value)", "(sensitive value)", true, false, false},
		// Unknown after apply.
		{"terraform_data.upd", "output", "update", "", "(known after apply)", false, true, false},
		{"terraform_data.upd", "id", "same", "", "", false, false, false},
		{"terraform_data.new", "input", "add", "<absent>", "(sensitive value)", true, false, false},
		{"terraform_data.new", "id", "add", "<absent>", "(known after apply)", false, true, false},
		{"terraform_data.gone", "input", "remove", `"bye"`, "<absent>", false, false, false},
		{"terraform_data.rep", "triggers_replace", "update", `"one"`, `"two"`, false, false, true},
		{"terraform_data.rep", "input", "same", `"same"`, `"same"`, false, false, false},
	} {
		t.Run(tc.addr+"."+tc.path, func(t *testing.T) {
			a := attr(t, p, tc.addr, tc.path)
			if a.Change != tc.change {
				t.Errorf("change %q, want %q", a.Change, tc.change)
			}
			if tc.before != "" && text(a.Before) != tc.before {
				t.Errorf("before %q, want %q", text(a.Before), tc.before)
			}
			if tc.after != "" && text(a.After) != tc.after {
				t.Errorf("after %q, want %q", text(a.After), tc.after)
			}
			if a.After != nil && (a.After.Sensitive != tc.sensitive || a.After.Unknown != tc.unknown) {
				t.Errorf("after sensitive %v unknown %v, want %v %v", a.After.Sensitive, a.After.Unknown, tc.sensitive, tc.unknown)
			}
			if a.ForcesReplacement != tc.replaces {
				t.Errorf("forces replacement %v, want %v", a.ForcesReplacement, tc.replaces)
			}
		})
	}
	// The object around a secret shows it as a marker too.
	in := attr(t, p, "terraform_data.upd", "input")
	if !strings.Contains(in.Before.Text, `"password": (sensitive value)`) || !in.Before.Multiline() {
		t.Errorf("input before = %q", in.Before.Text)
	}
}

func testOutputs(t *testing.T, p *planview.Plan) {
	got := map[string]planview.Output{}
	var names []string
	for _, o := range p.Outputs {
		got[o.Name] = o
		names = append(names, o.Name)
	}
	if strings.Join(names, ",") != "added,fixed,plain,pw" {
		t.Fatalf("outputs %v, want sorted added,fixed,plain,pw", names)
	}
	for _, tc := range []struct {
		name, action, symbol, before, after string
		sensitive                           bool
	}{
		{"added", "create", "+", "<absent>", "(known after apply)", false},
		{"fixed", "no-op", "", `"constant"`, `"constant"`, false},
		{"plain", "update", "~", `"one"`, `"two"`, false},
		{"pw", "update", "~", "(sensitive value)", "(sensitive value)", true},
	} {
		o := got[tc.name]
		if o.Action != tc.action || o.Symbol != tc.symbol || text(o.Before) != tc.before || text(o.After) != tc.after || o.Sensitive != tc.sensitive {
			t.Errorf("output %s = %s %q %q→%q sensitive %v, want %s %q %q→%q %v", tc.name, o.Action, o.Symbol, text(o.Before), text(o.After), o.Sensitive,
				tc.action, tc.symbol, tc.before, tc.after, tc.sensitive)
		}
	}
}

// No sensitive value reaches anything planview returns: not the marked
// ones, and not the copy Terraform leaves unmarked (terraform_data's output
// mirrors its input without the mark), nor the plan's own text once
// scrubbed.
func testRedaction(t *testing.T, p *planview.Plan, planText string) {
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	all.Write(out)
	for _, r := range p.Resources {
		for _, a := range r.Attributes {
			all.WriteString(text(a.Before) + text(a.After))
		}
	}
	for _, s := range []string{oldSecret, newSecret} {
		if strings.Contains(all.String(), s) {
			t.Errorf("parsed plan contains the secret %q", s)
		}
	}
	if !strings.Contains(planText, oldSecret) {
		t.Log("note: terraform's plan text no longer shows the unmarked copy of the old secret")
	}
	scrubbed := p.Scrub(planText)
	for _, s := range []string{oldSecret, newSecret} {
		if strings.Contains(scrubbed, s) {
			t.Errorf("scrubbed plan text contains the secret %q", s)
		}
	}
	if !strings.Contains(scrubbed, "terraform_data.upd") {
		t.Error("Scrub lost the plan text")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
	}{
		{"empty", "", "empty plan JSON"},
		{"not JSON", "nope", "planview"},
		{"future format", `{"format_version":"2.0"}`, "unsupported format version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := planview.Parse([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) err = %v, want %q", tc.in, err, tc.err)
			}
		})
	}
	// An empty object is a plan without changes.
	p, err := planview.Parse([]byte("{}"))
	if err != nil || len(p.Resources) != 0 || len(p.Outputs) != 0 {
		t.Errorf("Parse({}) = %+v, %v", p, err)
	}
}

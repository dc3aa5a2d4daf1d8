package repocfg_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// parityCase is one configuration of Atlantis's own config tests (package
// server/core/config: parser_validator_test.go, and raw/project_test.go,
// workflow_test.go, stage_test.go and step_test.go), written anew: the
// same shape and outcome, Atoll's own names and values where they do not
// matter. Cases that test a struct rather than a file become the smallest
// file holding it.
type parityCase struct {
	from string // the Atlantis test the case comes from
	name string
	yaml string
	// files are the checkout's other files (dir globs expand in them).
	files []string
	// ok is Atlantis's outcome: the file is accepted (true) or refused.
	ok bool
	// means, for an accepted file, checks that Atoll reads it as Atlantis
	// does; it returns what differs, "" when nothing does.
	means func(*repocfg.Config) string
	// differs, when set, is the key of parityDifferences saying why Atoll
	// does not do what Atlantis does with this file.
	differs string
}

// parityDifferences are the reasons, keyed, for the cases where Atoll's
// outcome is not Atlantis's. docs/configuration.md lists them under
// parityDocsHeading with the same words (TestAtlantisParityDocs).
var parityDifferences = map[string]string{
	"workspace-charset": "Workspace names are letters, digits, `_`, `.` and `-`, starting with a letter or digit, where Atlantis also takes shell characters (`a;b`, `a|b`, `a&&b`, backquotes) and a leading `.`: the comment grammar's `-w` takes only such names, so another could be configured but never targeted by a comment, and `$WORKSPACE` reaches `run` steps' shells.",
	"plan-in-apply":     "A `plan` step in an apply stage is accepted, but the apply is refused when it would run it: it would replace the plan that was reviewed (and approved, and policy-checked) by one nobody saw. Atlantis runs it, and applies the new plan.",
}

// parityDocsHeading is the heading of the docs list of parityDifferences.
const parityDocsHeading = "### Where Atoll reads a file differently from Atlantis"

// proj is a file of one project with the given keys, one per line.
func proj(keys ...string) string {
	ls := []string{"version: 3", "projects:", "- " + keys[0]}
	for _, k := range keys[1:] {
		ls = append(ls, "  "+k)
	}
	return lines(ls...)
}

// steps is a file whose workflow's plan stage has the given steps.
func steps(items ...string) string {
	ls := []string{"version: 3", "workflows:", "  w:", "    plan:", "      steps:"}
	for _, it := range items {
		ls = append(ls, "      - "+it)
	}
	return lines(ls...)
}

// first returns the only project, for checks of its fields.
func first(c *repocfg.Config) repocfg.Project {
	if len(c.Projects) != 1 {
		return repocfg.Project{Dir: "(" + strings.Join(labels(c.Projects), " ") + ")"}
	}
	return c.Projects[0]
}

// field checks one value of what Atoll read.
func field[T comparable](what string, got, want T) string {
	if got != want {
		return fmt.Sprintf("%s: got %#v, want %#v; ", what, got, want)
	}
	return ""
}

// projectsAre checks the projects' dir:workspace (name=dir:workspace).
func projectsAre(want ...string) func(*repocfg.Config) string {
	return func(c *repocfg.Config) string {
		got := labels(c.Projects)
		if !slices.Equal(got, want) {
			return "projects " + strings.Join(got, " ") + ", want " + strings.Join(want, " ")
		}
		return ""
	}
}

// defaultsOf checks a project Atlantis gives its defaults.
func defaultsOf(dir string) func(*repocfg.Config) string {
	return func(c *repocfg.Config) string {
		p := first(c)
		if !p.Autoplan.Enabled || !slices.Equal(p.Autoplan.WhenModified, repocfg.DefaultWhenModified) || p.Workflow != "" || p.ApplyRequirements != nil {
			return "not the defaults"
		}
		return field("dir", p.Dir, dir) + field("workspace", p.Workspace, "default")
	}
}

// requirements checks the first project's requirements of kind.
func requirements(kind string, want ...string) func(*repocfg.Config) string {
	return func(c *repocfg.Config) string {
		p := first(c)
		got := map[string][]string{"plan": p.PlanRequirements, "apply": p.ApplyRequirements, "import": p.ImportRequirements}[kind]
		if !slices.Equal(got, want) {
			return kind + "_requirements " + strings.Join(got, ",")
		}
		return ""
	}
}

// stageSteps checks the step names of workflow w's stages, "-" for a
// stage left to the defaults.
func stageSteps(w string, want map[string]string) func(*repocfg.Config) string {
	return func(c *repocfg.Config) string {
		wf, ok := c.Workflows[w]
		if !ok {
			return "no workflow " + w
		}
		stages := map[string][]repocfg.Step{"plan": wf.Plan, "apply": wf.Apply, "policy_check": wf.PolicyCheck, "import": wf.Import, "state_rm": wf.StateRm}
		var diffs []string
		for stage, steps := range stages {
			got := "-"
			if steps != nil {
				names := []string{}
				for _, s := range steps {
					names = append(names, s.Name)
				}
				got = strings.Join(names, ",")
			}
			w, ok := want[stage]
			if !ok {
				w = "-"
			}
			if got != w {
				diffs = append(diffs, stage+": "+got+", want "+w)
			}
		}
		sort.Strings(diffs)
		return strings.Join(diffs, "; ")
	}
}

// planStep checks the first plan step of workflow w: its name and args.
func planStep(name string, args map[string]string) func(*repocfg.Config) string {
	return func(c *repocfg.Config) string {
		s := c.Workflows["w"].Plan
		if len(s) == 0 {
			return "no plan steps"
		}
		if s[0].Name != name {
			return "step " + s[0].Name
		}
		for k, v := range args {
			if got, _ := s[0].Args[k].(string); got != v {
				return k + " " + got
			}
		}
		return ""
	}
}

var parityCases = []parityCase{
	// parser_validator_test.go, TestParseRepoCfg: the version key.
	{from: "ParseRepoCfg", name: "version missing", yaml: lines(`projects:`, `- dir: app`)},
	{from: "ParseRepoCfg", name: "version 0", yaml: lines(`version: 0`, `projects:`, `- dir: app`)},
	{from: "ParseRepoCfg", name: "version without a value", yaml: lines(`version:`, `projects:`, `- dir: app`)},
	{from: "ParseRepoCfg", name: "version 2 with a run step", ok: true,
		yaml:  lines(`version: 2`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - run: make 'the check'`),
		means: planStep("run", map[string]string{"command": "make 'the check'"})}, // split into words when run (runner)
	// Projects.
	{from: "ParseRepoCfg", name: "projects without a value", ok: true, yaml: lines(`version: 3`, `projects:`), means: projectsAre()},
	{from: "ParseRepoCfg", name: "project without dir", yaml: lines(`version: 3`, `projects:`, `- {}`)},
	{from: "ParseRepoCfg", name: "project at the root", ok: true, yaml: proj(`dir: .`), means: defaultsOf(".")},
	{from: "ParseRepoCfg", name: "timestamp-like values stay strings", ok: true,
		yaml: proj(`dir: 2031-01-02`, `name: 2031-01-03`, `autoplan:`, `  when_modified:`, `  - 2031-01-04`),
		means: func(c *repocfg.Config) string {
			p := first(c)
			return field("dir", p.Dir, "2031-01-02") + field("name", p.Name, "2031-01-03") + field("when_modified", strings.Join(p.Autoplan.WhenModified, ","), "2031-01-04")
		}},
	{from: "ParseRepoCfg", name: "autoplan on by default", ok: true, yaml: proj(`dir: net`), means: defaultsOf("net")},
	{from: "ParseRepoCfg", name: "autoplan with only when_modified", ok: true, yaml: proj(`dir: net`, `autoplan:`, `  when_modified: ["*.tf"]`),
		means: func(c *repocfg.Config) string {
			p := first(c)
			return field("enabled", p.Autoplan.Enabled, true) + field("when_modified", strings.Join(p.Autoplan.WhenModified, ","), "*.tf")
		}},
	{from: "ParseRepoCfg", name: "no workflows key", ok: true, yaml: proj(`dir: net`),
		means: func(c *repocfg.Config) string { return field("no workflows", len(c.Workflows) == 0, true) }},
	{from: "ParseRepoCfg", name: "workflows without a value", ok: true, yaml: proj(`dir: net`) + "workflows: ~\n",
		means: func(c *repocfg.Config) string { return field("no workflows", len(c.Workflows) == 0, true) }},
	{from: "ParseRepoCfg", name: "stages with steps left empty keep the defaults", ok: true,
		yaml:  lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `    apply:`, `      steps:`),
		means: stageSteps("w", nil)},
	{from: "ParseRepoCfg", name: "project keys but autoplan", ok: true,
		yaml: proj(`dir: .`, `workspace: blue`, `terraform_version: v1.6.0`, `apply_requirements: [approved]`, `workflow: w`) + "workflows:\n  w: ~\n",
		means: func(c *repocfg.Config) string {
			p := first(c)
			return field("workspace", p.Workspace, "blue") + field("version", p.TerraformVersion, "v1.6.0") + field("workflow", p.Workflow, "w") +
				requirements("apply", "approved")(c) + stageSteps("w", nil)(c)
		}},
	{from: "ParseRepoCfg", name: "project keys with autoplan off", ok: true,
		yaml:  proj(`dir: .`, `workflow: w`, `autoplan:`, `  enabled: false`) + "workflows:\n  w: ~\n",
		means: func(c *repocfg.Config) string { return field("autoplan", first(c).Autoplan.Enabled, false) }},
	{from: "ParseRepoCfg", name: "apply_requirements mergeable", ok: true, yaml: proj(`dir: .`, `apply_requirements: [mergeable]`), means: requirements("apply", "mergeable")},
	{from: "ParseRepoCfg", name: "apply_requirements undiverged", ok: true, yaml: proj(`dir: .`, `apply_requirements: [undiverged]`), means: requirements("apply", "undiverged")},
	{from: "ParseRepoCfg", name: "apply_requirements mergeable, approved", ok: true, yaml: proj(`dir: .`, `apply_requirements: [mergeable, approved]`), means: requirements("apply", "mergeable", "approved")},
	{from: "ParseRepoCfg", name: "apply_requirements undiverged, approved", ok: true, yaml: proj(`dir: .`, `apply_requirements: [undiverged, approved]`), means: requirements("apply", "undiverged", "approved")},
	{from: "ParseRepoCfg", name: "apply_requirements undiverged, mergeable", ok: true, yaml: proj(`dir: .`, `apply_requirements: [undiverged, mergeable]`), means: requirements("apply", "undiverged", "mergeable")},
	{from: "ParseRepoCfg", name: "apply_requirements all three", ok: true, yaml: proj(`dir: .`, `apply_requirements: [undiverged, mergeable, approved]`), means: requirements("apply", "undiverged", "mergeable", "approved")},
	{from: "ParseRepoCfg", name: "terraform_distribution opentofu", ok: true, yaml: proj(`dir: .`, `workspace: green`, `terraform_distribution: opentofu`),
		means: func(c *repocfg.Config) string {
			return field("distribution", first(c).TerraformDistribution, "opentofu")
		}},
	{from: "ParseRepoCfg", name: "dir ..", yaml: proj(`dir: ..`)},
	{from: "ParseRepoCfg", name: "empty project", yaml: lines(`version: 3`, `projects:`, `- {}`)},
	{from: "ParseRepoCfg", name: "empty second project", yaml: lines(`version: 3`, `projects:`, `- dir: net`, `- {}`)},
	{from: "ParseRepoCfg", name: "unknown project key", yaml: proj(`colour: blue`)},
	{from: "ParseRepoCfg", name: "undefined workflow", yaml: proj(`dir: .`, `workflow: nowhere`)},
	{from: "ParseRepoCfg", name: "two unnamed projects with one dir and workspace", yaml: lines(`version: 3`, `projects:`, `- {dir: net, workspace: w1}`, `- {dir: net, workspace: w1}`)},
	{from: "ParseRepoCfg", name: "two projects with one dir and workspace, one named", yaml: lines(`version: 3`, `projects:`, `- {name: a, dir: net, workspace: w1}`, `- {dir: net, workspace: w1}`)},
	{from: "ParseRepoCfg", name: "two projects with one name", yaml: lines(`version: 3`, `projects:`, `- {name: a, dir: net, workspace: w1}`, `- {name: a, dir: net, workspace: w1}`)},
	{from: "ParseRepoCfg", name: "two projects with one dir and workspace, two names", ok: true,
		yaml: lines(`version: 3`, `projects:`, `- {name: a, dir: net, workspace: w1}`, `- {name: b, dir: net, workspace: w1}`), means: projectsAre("a=net:w1", "b=net:w1")},
	{from: "ParseRepoCfg", name: "built-in steps in every stage, plan in apply", ok: true, differs: "plan-in-apply",
		yaml: lines(`version: 3`, `workflows:`, `  w:`, `    plan: {steps: [init, plan]}`, `    policy_check: {steps: [init, policy_check]}`,
			`    apply: {steps: [plan, apply]}`, `    import: {steps: [import]}`, `    state_rm: {steps: [state_rm]}`),
		means: stageSteps("w", map[string]string{"plan": "init,plan", "policy_check": "init,policy_check", "apply": "plan,apply", "import": "import", "state_rm": "state_rm"})},
	{from: "ParseRepoCfg", name: "extra_args in every stage, plan in apply", ok: true, differs: "plan-in-apply",
		yaml: lines(`version: 3`, `workflows:`, `  w:`, `    plan: {steps: [{init: {extra_args: []}}, {plan: {extra_args: [-x, -y]}}]}`,
			`    policy_check: {steps: [{policy_check: {extra_args: [-x]}}]}`, `    apply: {steps: [{plan: {extra_args: [-x]}}, {apply: {extra_args: [-y]}}]}`,
			`    import: {steps: [{import: {extra_args: [-z]}}]}`, `    state_rm: {steps: [{state_rm: {extra_args: [-z]}}]}`),
		means: stageSteps("w", map[string]string{"plan": "init,plan", "policy_check": "policy_check", "apply": "plan,apply", "import": "import", "state_rm": "state_rm"})},
	{from: "ParseRepoCfg", name: "run steps in every stage", ok: true,
		yaml: lines(`version: 3`, `workflows:`, `  w:`, `    plan: {steps: [run: echo "p"]}`, `    policy_check: {steps: [run: echo "c"]}`,
			`    apply: {steps: [run: echo "a b"]}`, `    import: {steps: [run: echo i]}`, `    state_rm: {steps: [run: echo s]}`),
		means: stageSteps("w", map[string]string{"plan": "run", "policy_check": "run", "apply": "run", "import": "run", "state_rm": "run"})},
	{from: "ParseRepoCfg", name: "env steps in every stage", ok: true,
		yaml: lines(`version: 3`, `workflows:`, `  w:`, `    plan: {steps: [env: {name: lower_case, value: v}]}`, `    policy_check: {steps: [env: {name: X, value: v}]}`,
			`    apply: {steps: [env: {name: X, command: date -u}]}`, `    import: {steps: [env: {name: X, value: v}]}`, `    state_rm: {steps: [env: {name: X, value: v}]}`),
		means: stageSteps("w", map[string]string{"plan": "env", "policy_check": "env", "apply": "env", "import": "env", "state_rm": "env"})},

	// TestParseCfgs_InvalidYAML.
	{from: "ParseCfgs_InvalidYAML", name: "a bare word", yaml: "justaword\n"},
	{from: "ParseCfgs_InvalidYAML", name: "a colon alone", yaml: ":\n"},
	{from: "ParseCfgs_InvalidYAML", name: "a list as a key, and a merge key", yaml: lines(`? [k]`, `: v`, `<<: {}`, `version: 3`)},
	// TestHasRepoCfg_InvalidFileExtension is TestLoad's atlantis.yml case;
	// TestParseRepoCfg_GlobalValidation is TestAtlantisParityServer's.

	// TestParseRepoCfg_V2ShellParsing: version 2 run commands must split
	// into words (the runner joins them); version 3 takes any.
	{from: "V2ShellParsing", name: "v2 plain words", ok: true, yaml: v2run(`echo one two`), means: planStep("run", nil)},
	{from: "V2ShellParsing", name: "v2 quoted words", ok: true, yaml: v2run(`echo 'one two'`), means: planStep("run", nil)},
	{from: "V2ShellParsing", name: "v2 unclosed quote", yaml: v2run(`echo 'one two`)},
	{from: "V2ShellParsing", name: "v2 escaped quotes", ok: true, yaml: v2run(`mkdir -p x/y || printf \'no region set.\\nfix it\'`), means: planStep("run", nil)},
	{from: "V2ShellParsing", name: "v3 unclosed quote", ok: true, yaml: strings.Replace(v2run(`echo 'one two`), "version: 2", "version: 3", 1), means: planStep("run", map[string]string{"command": "echo 'one two"})},

	// TestParseRepoCfg_GlobExpansion and the two after it, in a checkout.
	{from: "GlobExpansion", name: "one star", ok: true, files: globRepo, yaml: proj(`dir: "stacks/*"`), means: projectsAre("stacks/blue:default", "stacks/green:default")},
	{from: "GlobExpansion", name: "double star", ok: true, files: globRepo, yaml: proj(`dir: "regions/**"`), means: projectsAre("regions/east:default", "regions/west:default")},
	{from: "GlobExpansion", name: "glob beside a plain dir", ok: true, files: globRepo, yaml: lines(`version: 3`, `projects:`, `- dir: .`, `- dir: "stacks/*"`), means: projectsAre(".:default", "stacks/blue:default", "stacks/green:default")},
	{from: "GlobExpansion", name: "glob keeps the entry's keys", ok: true, files: globRepo,
		yaml: proj(`dir: "stacks/*"`, `workspace: edge`, `apply_requirements: [approved]`) + "workflows:\n  default: ~\n",
		means: func(c *repocfg.Config) string {
			return projectsAre("stacks/blue:edge", "stacks/green:edge")(c) + field("apply_requirements", strings.Join(c.Projects[len(c.Projects)-1].ApplyRequirements, ","), "approved")
		}},
	{from: "GlobExpansion", name: "no glob", ok: true, files: globRepo, yaml: proj(`dir: stacks/blue`), means: projectsAre("stacks/blue:default")},
	{from: "GlobExpansion", name: "bad glob", files: globRepo, yaml: proj(`dir: "[stacks"`)},
	{from: "GlobExpansionPreservesSettings", name: "glob keeps every key", ok: true, files: globRepo,
		yaml: proj(`dir: "stacks/*"`, `workspace: edge`, `terraform_version: v1.7.0`, `apply_requirements: [approved, mergeable]`, `autoplan:`, `  enabled: false`, `  when_modified: ["*.tf"]`),
		means: func(c *repocfg.Config) string {
			var diffs []string
			for _, p := range c.Projects {
				diffs = append(diffs, field("workspace", p.Workspace, "edge")+field("version", p.TerraformVersion, "v1.7.0")+field("autoplan", p.Autoplan.Enabled, false)+
					field("when_modified", strings.Join(p.Autoplan.WhenModified, ","), "*.tf")+field("apply_requirements", strings.Join(p.ApplyRequirements, ","), "approved,mergeable"))
			}
			return field("projects", len(c.Projects), 2) + strings.Join(diffs, "")
		}},
	{from: "GlobExpansionNoNameCopy", name: "glob drops the name", ok: true, files: globRepo, yaml: proj(`name: stack`, `dir: "stacks/*"`), means: projectsAre("stacks/blue:default", "stacks/green:default")},

	// raw/project_test.go, TestProject_Validate, each project alone in a file.
	{from: "Project_Validate", name: "dir only", ok: true, yaml: proj(`dir: .`), means: defaultsOf(".")},
	{from: "Project_Validate", name: "no dir", yaml: proj(`workspace: blue`)},
	{from: "Project_Validate", name: "dir leaving the repository", yaml: proj(`dir: ../elsewhere`)},
	{from: "Project_Validate", name: "branch not between slashes", yaml: proj(`dir: .`, `branch: main`)},
	{from: "Project_Validate", name: "branch not a regexp", yaml: proj(`dir: .`, `branch: /(main/`)},
	{from: "Project_Validate", name: "plan_requirements unknown", yaml: proj(`dir: .`, `plan_requirements: [reviewed]`)},
	{from: "Project_Validate", name: "plan_requirements all three", ok: true, yaml: proj(`dir: .`, `plan_requirements: [undiverged, mergeable, approved]`), means: requirements("plan", "undiverged", "mergeable", "approved")},
	{from: "Project_Validate", name: "plan_requirements approved", ok: true, yaml: proj(`dir: .`, `plan_requirements: [approved]`), means: requirements("plan", "approved")},
	{from: "Project_Validate", name: "plan_requirements mergeable", ok: true, yaml: proj(`dir: .`, `plan_requirements: [mergeable]`), means: requirements("plan", "mergeable")},
	{from: "Project_Validate", name: "plan_requirements mergeable, approved", ok: true, yaml: proj(`dir: .`, `plan_requirements: [mergeable, approved]`), means: requirements("plan", "mergeable", "approved")},
	{from: "Project_Validate", name: "apply_requirements unknown", yaml: proj(`dir: .`, `apply_requirements: [reviewed]`)},
	{from: "Project_Validate", name: "apply_requirements approved", ok: true, yaml: proj(`dir: .`, `apply_requirements: [approved]`), means: requirements("apply", "approved")},
	{from: "Project_Validate", name: "apply_requirements mergeable", ok: true, yaml: proj(`dir: .`, `apply_requirements: [mergeable]`), means: requirements("apply", "mergeable")},
	{from: "Project_Validate", name: "apply_requirements undiverged", ok: true, yaml: proj(`dir: .`, `apply_requirements: [undiverged]`), means: requirements("apply", "undiverged")},
	{from: "Project_Validate", name: "apply_requirements mergeable, approved", ok: true, yaml: proj(`dir: .`, `apply_requirements: [mergeable, approved]`), means: requirements("apply", "mergeable", "approved")},
	{from: "Project_Validate", name: "apply_requirements undiverged, approved", ok: true, yaml: proj(`dir: .`, `apply_requirements: [undiverged, approved]`), means: requirements("apply", "undiverged", "approved")},
	{from: "Project_Validate", name: "apply_requirements undiverged, mergeable", ok: true, yaml: proj(`dir: .`, `apply_requirements: [undiverged, mergeable]`), means: requirements("apply", "undiverged", "mergeable")},
	{from: "Project_Validate", name: "apply_requirements all three", ok: true, yaml: proj(`dir: .`, `apply_requirements: [undiverged, mergeable, approved]`), means: requirements("apply", "undiverged", "mergeable", "approved")},
	{from: "Project_Validate", name: "import_requirements unknown", yaml: proj(`dir: .`, `import_requirements: [reviewed]`)},
	{from: "Project_Validate", name: "import_requirements all three", ok: true, yaml: proj(`dir: .`, `import_requirements: [undiverged, mergeable, approved]`), means: requirements("import", "undiverged", "mergeable", "approved")},
	{from: "Project_Validate", name: "terraform_version empty", yaml: proj(`dir: .`, `terraform_version: ""`)},
	{from: "Project_Validate", name: "terraform_version v and major", ok: true, yaml: proj(`dir: .`, `terraform_version: v2`), means: func(c *repocfg.Config) string { return field("version", first(c).TerraformVersion, "v2") }},
	{from: "Project_Validate", name: "terraform_version major", ok: true, yaml: proj(`dir: .`, `terraform_version: "2"`), means: func(c *repocfg.Config) string { return field("version", first(c).TerraformVersion, "2") }},
	{from: "Project_Validate", name: "name empty", yaml: proj(`dir: .`, `name: ""`)},
	{from: "Project_Validate", name: "name with a slash", ok: true, yaml: proj(`dir: .`, `name: team/net`), means: projectsAre("team/net=.:default")},
	{from: "Project_Validate", name: "name with an emoji", yaml: proj(`dir: .`, `name: "🚀"`)},
	{from: "Project_Validate", name: "name with spaces", yaml: proj(`dir: .`, `name: "a b c"`)},
	{from: "Project_Validate", name: "name with a plus", yaml: proj(`dir: .`, `name: "net+"`)},
	{from: "Project_Validate", name: "name with a backslash", yaml: proj(`dir: .`, `name: 'net\'`)},
	{from: "Project_Validate", name: "dir glob star", ok: true, files: globRepo, yaml: proj(`dir: "stacks/*"`), means: projectsAre("stacks/blue:default", "stacks/green:default")},
	{from: "Project_Validate", name: "dir glob double star", ok: true, files: globRepo, yaml: proj(`dir: "regions/**"`), means: projectsAre("regions/east:default", "regions/west:default")},
	{from: "Project_Validate", name: "dir glob question mark", ok: true, files: globRepo, yaml: proj(`dir: "stack?"`), means: projectsAre("stack1:default")},
	{from: "Project_Validate", name: "dir glob class", ok: true, files: globRepo, yaml: proj(`dir: "[xyz]"`), means: projectsAre("y:default")},
	{from: "Project_Validate", name: "dir glob in the middle", ok: true, files: globRepo, yaml: proj(`dir: "stacks/*/tf"`), means: projectsAre("stacks/green/tf:default")},
	{from: "Project_Validate", name: "dir glob unclosed class", yaml: proj(`dir: "[xyz"`)},
	{from: "Project_Validate", name: "name with a star", yaml: proj(`dir: net`, `name: "net*"`)},
	{from: "Project_Validate", name: "name with two stars", yaml: proj(`dir: net`, `name: "net**"`)},
	{from: "Project_Validate", name: "name with a question mark", yaml: proj(`dir: net`, `name: "net?"`)},
	{from: "Project_Validate", name: "name with a bracket", yaml: proj(`dir: net`, `name: "net[2]"`)},
	// Atlantis's Validate refuses a name beside a glob dir, but its
	// ParseRepoCfg expands the dir first (without the name), and so does
	// Atoll's Load.
	{from: "Project_Validate", name: "name with a star dir", ok: true, files: globRepo, yaml: proj(`dir: "stacks/*"`, `name: stack`), means: projectsAre("stacks/blue:default", "stacks/green:default")},
	{from: "Project_Validate", name: "name with a double-star dir", ok: true, files: globRepo, yaml: proj(`dir: "regions/**"`, `name: region`), means: projectsAre("regions/east:default", "regions/west:default")},
	{from: "Project_Validate", name: "name with a plain dir", ok: true, yaml: proj(`dir: stacks/blue`, `name: blue`), means: projectsAre("blue=stacks/blue:default")},
	{from: "Project_Validate", name: "workspace leaving the dir", yaml: proj(`dir: .`, `workspace: ../up`)},
	{from: "Project_Validate", name: "workspace with .. inside", yaml: proj(`dir: .`, `workspace: a..b`)},
	{from: "Project_Validate", name: "workspace starting with a slash", yaml: proj(`dir: .`, `workspace: /tmp`)},
	{from: "Project_Validate", name: "workspace with a slash", yaml: proj(`dir: .`, `workspace: a/b`)},
	{from: "Project_Validate", name: "workspace with a backslash", yaml: proj(`dir: .`, `workspace: 'a\b'`)},
	{from: "Project_Validate", name: "workspace with semicolons", ok: true, differs: "workspace-charset", yaml: proj(`dir: .`, `workspace: "x;y;z"`)},
	{from: "Project_Validate", name: "workspace with &&", ok: true, differs: "workspace-charset", yaml: proj(`dir: .`, `workspace: "x&&y"`)},
	{from: "Project_Validate", name: "workspace with $( )", yaml: proj(`dir: .`, `workspace: "x$(y)"`)},
	{from: "Project_Validate", name: "workspace with backquotes", ok: true, differs: "workspace-charset", yaml: proj(`dir: .`, "workspace: \"x`y`\"")},
	{from: "Project_Validate", name: "workspace with a pipe", ok: true, differs: "workspace-charset", yaml: proj(`dir: .`, `workspace: "x|y"`)},
	{from: "Project_Validate", name: "workspace with a redirection", yaml: proj(`dir: .`, `workspace: "x>/y"`)},
	{from: "Project_Validate", name: "workspace with a space", yaml: proj(`dir: .`, `workspace: "x y"`)},
	{from: "Project_Validate", name: "workspace with a newline", yaml: proj(`dir: .`, `workspace: "x\ny"`)},
	{from: "Project_Validate", name: "workspace with a variable", yaml: proj(`dir: .`, `workspace: "x$Y"`)},
	{from: "Project_Validate", name: "workspace starting with a dash", yaml: proj(`dir: .`, `workspace: "-state"`)},
	{from: "Project_Validate", name: "workspace starting with a tilde", yaml: proj(`dir: .`, `workspace: "~me"`)},
	{from: "Project_Validate", name: "workspace starting with a dot", ok: true, differs: "workspace-charset", yaml: proj(`dir: .`, `workspace: .quiet`)},
	{from: "Project_Validate", name: "workspace with a dash", ok: true, yaml: proj(`dir: .`, `workspace: blue-2`), means: projectsAre(".:blue-2")},
	{from: "Project_Validate", name: "workspace with a dot and an underscore", ok: true, yaml: proj(`dir: .`, `workspace: b.lue_2-x`), means: projectsAre(".:b.lue_2-x")},

	// TestProject_ToValid: how dirs and defaults come out.
	{from: "Project_ToValid", name: "minimal", ok: true, yaml: proj(`dir: .`), means: defaultsOf(".")},
	{from: "Project_ToValid", name: "every key", ok: true,
		yaml: proj(`dir: .`, `name: all`, `workspace: blue`, `workflow: w`, `terraform_version: v1.6.0`, `autoplan: {when_modified: ["*.tf"], enabled: false}`,
			`plan_requirements: [approved]`, `apply_requirements: [approved]`, `import_requirements: [approved]`, `execution_order_group: 3`, `repo_locks: {mode: on_apply}`) + "workflows:\n  w: ~\n",
		means: func(c *repocfg.Config) string {
			p := first(c)
			return field("name", p.Name, "all") + field("workflow", p.Workflow, "w") + field("group", p.ExecutionOrderGroup == 3, true) + field("locks", p.RepoLocks, repocfg.LockOnApply) +
				field("autoplan", p.Autoplan.Enabled, false) + requirements("import", "approved")(c)
		}},
	{from: "Project_ToValid", name: "terraform_version without v", ok: true, yaml: proj(`dir: .`, `terraform_version: 1.6.0`), means: func(c *repocfg.Config) string { return field("version", first(c).TerraformVersion, "1.6.0") }},
	{from: "Project_ToValid", name: "dir /", ok: true, yaml: proj(`dir: /`), means: projectsAre(".:default")},
	{from: "Project_ToValid", name: "dir starting with /", ok: true, yaml: proj(`dir: /x/y/z`), means: projectsAre("x/y/z:default")},
	{from: "Project_ToValid", name: "dir with a trailing slash", ok: true, yaml: proj(`dir: net/`), means: projectsAre("net:default")},
	{from: "Project_ToValid", name: "dir with .. to clean", yaml: proj(`dir: ./net/sub/../`)}, // Validate refuses it first
	{from: "Project_ToValid", name: "dir ./", ok: true, yaml: proj(`dir: ./`), means: projectsAre(".:default")},
	{from: "Project_ToValid", name: "dir ././", ok: true, yaml: proj(`dir: ././`), means: projectsAre(".:default")},
	{from: "Project_ToValid", name: "dir .", ok: true, yaml: proj(`dir: .`), means: projectsAre(".:default")},
	{from: "Project_ToValid", name: "workspace empty", ok: true, yaml: proj(`dir: .`, `workspace: ""`), means: projectsAre(".:default")},
	// TestProject_UnmarshalYAML's file of every key has a branch without
	// slashes, which Validate then refuses.
	{from: "Project_UnmarshalYAML", name: "every key, branch without slashes", yaml: proj(`name: all`, `branch: trunk`, `dir: net`, `workspace: blue`, `execution_order_group: 4`)},

	// raw/workflow_test.go and stage_test.go: stages left out or empty.
	{from: "Workflow_UnmarshalYAML", name: "workflow without a value", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`), means: stageSteps("w", nil)},
	{from: "Workflow_UnmarshalYAML", name: "workflow ~", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w: ~`), means: stageSteps("w", nil)},
	{from: "Workflow_UnmarshalYAML", name: "plan and apply without values", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `    apply:`), means: stageSteps("w", nil)},
	{from: "Workflow_UnmarshalYAML", name: "three stages without values", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `    policy_check:`, `    apply:`), means: stageSteps("w", nil)},
	{from: "Workflow_UnmarshalYAML", name: "steps ~", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    plan: {steps: ~}`, `    policy_check: {steps: ~}`, `    apply: {steps: ~}`), means: stageSteps("w", nil)},
	{from: "Workflow_UnmarshalYAML", name: "steps []: run nothing", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    plan: {steps: []}`, `    policy_check: {steps: []}`, `    apply: {steps: []}`),
		means: stageSteps("w", map[string]string{"plan": "", "policy_check": "", "apply": ""})},
	{from: "Stage_UnmarshalYAML", name: "a step name Atlantis does not have", yaml: steps(`step9`)},

	// raw/step_test.go: each step alone in a plan stage.
	{from: "Step_Validate", name: "init", ok: true, yaml: steps(`init`), means: planStep("init", nil)},
	{from: "Step_Validate", name: "plan", ok: true, yaml: steps(`plan`), means: planStep("plan", nil)},
	{from: "Step_Validate", name: "apply (in the apply stage)", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    apply: {steps: [apply]}`), means: stageSteps("w", map[string]string{"apply": "apply"})},
	{from: "Step_Validate", name: "init extra_args", ok: true, yaml: steps(`init: {extra_args: [-upgrade, -get=true]}`), means: planStep("init", nil)},
	{from: "Step_Validate", name: "plan extra_args", ok: true, yaml: steps(`plan: {extra_args: [-refresh=false, -parallelism=4]}`), means: planStep("plan", nil)},
	{from: "Step_Validate", name: "env with command", ok: true, yaml: steps(`env: {name: STAMP, command: date}`), means: planStep("env", map[string]string{"name": "STAMP", "command": "date"})},
	{from: "Step_Validate", name: "env with shell", ok: true, yaml: steps(`env: {name: STAMP, command: date, shell: bash}`), means: planStep("env", map[string]string{"shell": "bash"})},
	{from: "Step_Validate", name: "env with shellArgs text", ok: true, yaml: steps(`env: {name: STAMP, command: date, shell: bash, shellArgs: -c}`), means: planStep("env", map[string]string{"shellArgs": "-c"})},
	{from: "Step_Validate", name: "env with shellArgs list", ok: true, yaml: steps(`env: {name: STAMP, command: date, shell: bash, shellArgs: [-e, -c]}`), means: planStep("env", nil)},
	{from: "Step_Validate", name: "apply extra_args (in the apply stage)", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    apply: {steps: [{apply: {extra_args: [-parallelism=2]}}]}`), means: stageSteps("w", map[string]string{"apply": "apply"})},
	{from: "Step_Validate", name: "run", ok: true, yaml: steps(`run: make lint`), means: planStep("run", map[string]string{"command": "make lint"})},
	{from: "Step_Validate", name: "empty step", yaml: steps(`~`)},
	{from: "Step_Validate", name: "unknown step name", yaml: steps(`lint`)},
	{from: "Step_Validate", name: "two keys, mappings", yaml: steps(`{one: {}, two: {}}`)},
	{from: "Step_Validate", name: "two keys, env-like", yaml: steps(`{one: {name: A}, two: {name: B}}`)},
	{from: "Step_Validate", name: "two keys, strings", yaml: steps(`{one: "", two: ""}`)},
	{from: "Step_Validate", name: "unknown key, mapping", yaml: steps(`{lint: {}}`)},
	{from: "Step_Validate", name: "unknown key, env-like", yaml: steps(`{lint: {name: A}}`)},
	{from: "Step_Validate", name: "unknown key, string", yaml: steps(`{lint: ""}`)},
	{from: "Step_Validate", name: "built-in step with another key", yaml: steps(`init: {upgrade: []}`)},
	{from: "Step_Validate", name: "built-in step with two other keys", yaml: steps(`init: {upgrade: [], get: []}`)},
	{from: "Step_Validate", name: "env without name", yaml: steps(`env: {value: v}`)},
	{from: "Step_Validate", name: "env with unknown keys", yaml: steps(`env: {colour: "", size: ""}`)},
	{from: "Step_Validate", name: "env with value and command", yaml: steps(`env: {name: A, value: v, command: date}`)},
	{from: "Step_Validate", name: "env with shell, without command", yaml: steps(`env: {name: A, shell: bash}`)},
	{from: "Step_Validate", name: "env with shellArgs, without shell", yaml: steps(`env: {name: A, shellArgs: -c}`)},
	{from: "Step_Validate", name: "run with shellArgs numbers", yaml: steps(`run: {command: date, shell: sh, shellArgs: [7, 8]}`)},
	{from: "Step_Validate", name: "run with a number in shellArgs", yaml: steps(`run: {command: date, shell: sh, shellArgs: [-c, 8]}`)},
	{from: "Step_Validate", name: "v3 run that does not split into words", ok: true, yaml: steps(`run: "echo 'x"`), means: planStep("run", map[string]string{"command": "echo 'x"})},
	{from: "StepConfig_YAMLMarshalling", name: "extra_args of a mapping list", yaml: steps(`{plan: [{extra_args: {a: b}}]}`)},
	{from: "StepConfig_YAMLMarshalling", name: "run beside another key", yaml: steps(`{run: date, other: x}`)},
	{from: "StepConfig_YAMLMarshalling", name: "env with value", ok: true, yaml: steps(`env: {value: v, name: A}`), means: planStep("env", map[string]string{"value": "v", "name": "A"})},
	// TestStep_ToValid: the steps it converts, each accepted.
	{from: "Step_ToValid", name: "policy_check (in its stage)", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    policy_check: {steps: [policy_check]}`), means: stageSteps("w", map[string]string{"policy_check": "policy_check"})},
	{from: "Step_ToValid", name: "import (in its stage)", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    import: {steps: [{import: {extra_args: [-lock=false]}}]}`), means: stageSteps("w", map[string]string{"import": "import"})},
	{from: "Step_ToValid", name: "policy_check extra_args (in its stage)", ok: true, yaml: lines(`version: 3`, `workflows:`, `  w:`, `    policy_check: {steps: [{policy_check: {extra_args: [--all-namespaces]}}]}`), means: stageSteps("w", map[string]string{"policy_check": "policy_check"})},
	{from: "Step_ToValid", name: "run output hide", ok: true, yaml: steps(`run: {command: make, output: hide}`), means: planStep("run", map[string]string{"output": "hide"})},
	{from: "Step_ToValid", name: "run output repeated", ok: true, yaml: steps(`run: {command: make, output: [hide, hide]}`), means: planStep("run", nil)},
	{from: "Step_ToValid", name: "run output list", ok: true, yaml: steps(`run: {command: make, output: [show, strip_refreshing]}`), means: planStep("run", nil)},
	{from: "Step_ToValid", name: "run output filter_regex", ok: true, yaml: steps(`run: {command: make, output: [{filter_regex: "tok=.*"}]}`), means: planStep("run", nil)},
	{from: "Step_ToValid", name: "run output mixed", ok: true, yaml: steps(`run: {command: make, output: [strip_refreshing, {filter_regex: "tok=.*"}]}`), means: planStep("run", nil)},
	{from: "Step_ToValid", name: "run output two filters", ok: true, yaml: steps(`run: {command: make, output: [strip_refreshing, {filter_regex: "a.*"}, {filter_regex: "(k:)[^ ]*"}]}`), means: planStep("run", nil)},
	{from: "Step_ToValid", name: "multienv", ok: true, yaml: steps(`multienv: ./vars.sh`), means: planStep("multienv", map[string]string{"command": "./vars.sh"})},
	{from: "Step_ToValid", name: "multienv output hide", ok: true, yaml: steps(`multienv: {command: ./vars.sh, output: hide}`), means: planStep("multienv", map[string]string{"output": "hide"})},
}

// globRepo is the checkout of the glob cases: stacks and regions, a
// directory without Terraform files, and one for each other pattern.
var globRepo = []string{"stacks/blue/main.tf", "stacks/green/main.tf", "stacks/docs/README.md", "regions/east/main.tf", "regions/west/main.tf",
	"stack1/main.tf", "y/main.tf", "stacks/green/tf/main.tf"}

// v2run is a version 2 file whose plan and apply stages run cmd.
func v2run(cmd string) string {
	return lines(`version: 2`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - run: `+cmd, `    apply:`, `      steps:`, `      - run: `+cmd)
}

// loadCase loads a case's file from a checkout, as Atlantis's ParseRepoCfg
// reads it from a clone.
func loadCase(t *testing.T, c parityCase) (*repocfg.Config, error) {
	t.Helper()
	root := writeRepo(t, c.files...)
	if err := os.WriteFile(filepath.Join(root, "atlantis.yaml"), []byte(c.yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return repocfg.Load(root)
}

func TestAtlantisParity(t *testing.T) {
	matching, listed := 0, 0
	for _, c := range parityCases {
		t.Run(c.from+"/"+c.name, func(t *testing.T) {
			cfg, err := loadCase(t, c)
			accepted := err == nil
			var meaning string
			if accepted && c.ok && c.means != nil {
				meaning = c.means(cfg)
			}
			same := accepted == c.ok && meaning == ""
			switch {
			case c.differs == "" && same:
				matching++
			case c.differs == "":
				t.Errorf("Atlantis accepts: %v; Atoll: err %v, meaning %q", c.ok, err, meaning)
			case parityDifferences[c.differs] == "":
				t.Errorf("differs %q has no reason in parityDifferences", c.differs)
			case same && c.differs != "plan-in-apply":
				// plan-in-apply parses as in Atlantis: the apply stage is
				// refused when it runs (runner.checkStage).
				t.Errorf("listed as %q but Atoll does what Atlantis does (err %v)", c.differs, err)
			default:
				listed++
			}
		})
	}
	t.Logf("Atlantis's configs %d: matching %d, listed %d", len(parityCases), matching, listed)
	if matching+listed != len(parityCases) {
		t.Errorf("%d cases are neither matching nor listed", len(parityCases)-matching-listed)
	}
}

// TestAtlantisParityServer is TestParseRepoCfg_GlobalValidation: with
// Atlantis's default server config a file may not set workflow.
func TestAtlantisParityServer(t *testing.T) {
	root := writeRepo(t)
	if err := os.WriteFile(filepath.Join(root, "atlantis.yaml"), []byte(proj(`dir: .`, `workflow: w`)+"workflows:\n  w: ~\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := repocfg.DefaultServerConfig().Load(root, "github.com/acme/infra", "main")
	wantInvalid(t, err, "allowed_overrides: [workflow]")
}

// The docs list the differences with the table's words: one item per key
// of parityDifferences, none more, each used by a case.
func TestAtlantisParityDocs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "\n"+parityDocsHeading+"\n")
	if start < 0 {
		t.Fatalf("docs/configuration.md has no %q", parityDocsHeading)
	}
	section := doc[start+len(parityDocsHeading)+2:]
	if end := strings.Index(section, "\n#"); end >= 0 {
		section = section[:end]
	}
	// Items are "- **key**: reason", the reason wrapped over lines.
	item := regexp.MustCompile(`(?m)^- \*\*([a-z0-9-]+)\*\*: `)
	locs := item.FindAllStringSubmatchIndex(section, -1)
	documented := map[string]string{}
	for i, l := range locs {
		end := len(section)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body := section[l[1]:end]
		if cut := strings.Index(body, "\n\n"); cut >= 0 {
			body = body[:cut]
		}
		documented[section[l[2]:l[3]]] = strings.Join(strings.Fields(body), " ")
	}
	for key, reason := range parityDifferences {
		if got, ok := documented[key]; !ok {
			t.Errorf("docs list no %q", key)
		} else if got != reason {
			t.Errorf("docs give %q as\n%s\nthe table as\n%s", key, got, reason)
		}
		if !slices.ContainsFunc(parityCases, func(c parityCase) bool { return c.differs == key }) {
			t.Errorf("no case is listed as %q", key)
		}
	}
	for key := range documented {
		if _, ok := parityDifferences[key]; !ok {
			t.Errorf("docs list %q, which no case has", key)
		}
	}
}

package terraform_test

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/terraform"
)

// tfArgs is what Terraform makes of an argument vector, as far as Atoll's
// promises go: where the plan file and the state go, and whether input,
// locking and the output format are Atoll's.
type tfArgs struct {
	out, state, stateOut, backup, generateConfig, config string
	lock, input, json, autoApprove                       bool
	cliRewrite                                           bool // -h/-v: Terraform runs help or version instead
	positional                                           []string
}

// parseLikeTerraform reads argv (subcommand first) the way Terraform 1.5.7
// does, re-expressed from its sources rather than imported (they are
// internal): the CLI layer's -h/-help/--help before "--" and -v/-version/
// --version anywhere (main.go, mitchellh/cli's processArgs); the view
// flags taken out of the list first (command/arguments/view.go for plan
// and apply, Meta.process's -no-color for import and state rm); then one Go
// flag.FlagSet per command with the flags command/arguments/{plan,apply,
// extended}.go, command/import.go, command/state_rm.go and meta.go define.
func parseLikeTerraform(argv []string) (tfArgs, error) {
	a := tfArgs{lock: true, input: true}
	for _, w := range argv {
		if w == "--" {
			break
		}
		if slices.Contains([]string{"-h", "-help", "--help", "-v", "-version", "--version"}, w) {
			a.cliRewrite = true
		}
	}
	sub, args := argv[0], slices.Clone(argv[1:])
	if sub == "state" {
		sub, args = "state rm", args[1:]
	}
	args = slices.DeleteFunc(args, func(w string) bool {
		return w == "-no-color" || (w == "-compact-warnings" && (sub == "plan" || sub == "apply"))
	})
	fs := flag.NewFlagSet(sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var discard []string
	list := func(name string) {
		fs.Func(name, "", func(v string) error { discard = append(discard, v); return nil })
	}
	var ignoreBool bool
	var ignoreInt int
	switch sub {
	case "plan", "apply":
		fs.BoolVar(&a.lock, "lock", true, "")
		fs.Duration("lock-timeout", 0, "")
		fs.StringVar(&a.state, "state", "", "")
		fs.StringVar(&a.stateOut, "state-out", "", "")
		fs.StringVar(&a.backup, "backup", "", "")
		fs.IntVar(&ignoreInt, "parallelism", 10, "")
		fs.BoolVar(&ignoreBool, "refresh", true, "")
		fs.BoolVar(&ignoreBool, "destroy", false, "")
		fs.BoolVar(&ignoreBool, "refresh-only", false, "")
		list("target")
		list("replace")
		list("var")
		list("var-file")
		fs.BoolVar(&a.input, "input", true, "")
		fs.BoolVar(&a.json, "json", false, "")
		if sub == "plan" {
			fs.Bool("detailed-exitcode", false, "")
			fs.StringVar(&a.out, "out", "", "")
			fs.StringVar(&a.generateConfig, "generate-config-out", "", "")
		} else {
			fs.BoolVar(&a.autoApprove, "auto-approve", false, "")
		}
	case "import":
		fs.BoolVar(&a.input, "input", true, "")
		list("target")
		fs.Bool("compact-warnings", false, "")
		list("var")
		list("var-file")
		fs.Bool("ignore-remote-version", false, "")
		fs.Int("parallelism", 10, "")
		fs.StringVar(&a.state, "state", "", "")
		fs.StringVar(&a.stateOut, "state-out", "", "")
		fs.StringVar(&a.backup, "backup", "", "")
		fs.StringVar(&a.config, "config", "", "")
		fs.BoolVar(&a.lock, "lock", true, "")
		fs.Duration("lock-timeout", 0, "")
	case "state rm":
		a.input = false // no -input flag: TF_INPUT=0 in Atoll's environment rules
		fs.Bool("ignore-remote-version", false, "")
		fs.Bool("dry-run", false, "")
		fs.StringVar(&a.backup, "backup", "", "")
		fs.BoolVar(&a.lock, "lock", true, "")
		fs.Duration("lock-timeout", 0, "")
		fs.StringVar(&a.state, "state", "", "")
	default:
		return a, errors.New("no model of terraform " + sub)
	}
	err := fs.Parse(args)
	a.positional = fs.Args()
	return a, err
}

// argvFor builds the argument vector Atoll runs for a comment's command.
func argvFor(name string, extra []string) []string {
	switch name {
	case "apply":
		return terraform.ApplyArgv("job.tfplan", extra)
	case "import", "state":
		// runner's stateCommandArgs: the same order, the addresses last.
		if name == "import" {
			return append(append([]string{"import"}, extra...), "-input=false", "-no-color", "a.b", "id")
		}
		return append(append([]string{"state", "rm"}, extra...), "-no-color", "a.b")
	}
	return terraform.PlanArgv("job.tfplan", extra)
}

// keepsPromises checks what Terraform makes of an argv Atoll built: the plan
// file is Atoll's, the state stays in the backend, input stays off, state
// stays locked, the output stays text, and nothing else is positional.
func keepsPromises(t *testing.T, name string, argv []string) {
	t.Helper()
	got, err := parseLikeTerraform(argv)
	if err != nil {
		// Terraform refuses it (a value it cannot read): nothing runs.
		return
	}
	wantPositional := map[string][]string{"plan": nil, "apply": {"job.tfplan"}, "import": {"a.b", "id"}, "state": {"a.b"}}[name]
	switch {
	case name == "plan" && got.out != "job.tfplan":
		t.Errorf("%q: plan file %q", argv, got.out)
	case got.state != "" || got.stateOut != "" || got.backup != "" || got.generateConfig != "" || got.config != "":
		t.Errorf("%q: files redirected: %+v", argv, got)
	case !got.lock || got.input || got.json || got.autoApprove || got.cliRewrite:
		t.Errorf("%q: Atoll's settings changed: %+v", argv, got)
	case !slices.Equal(got.positional, wantPositional):
		t.Errorf("%q: positional arguments %q, want %q", argv, got.positional, wantPositional)
	}
}

// The attack the outside probe found, shown against the model: with
// Atoll's flags first (the old order) and no allowlist, the comment's -out
// won, and -state-out, -backup and -lock reach Terraform in any order. The
// allowlist refuses every one of these comments.
func TestSecurityTerraformArgsModel(t *testing.T) {
	oldPlan := func(extra ...string) []string {
		return append([]string{"plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=job.tfplan"}, extra...)
	}
	for _, tc := range []struct {
		comment string
		argv    []string
		diverts func(tfArgs) bool
	}{
		{"atlantis plan -- -out=/tmp/x", oldPlan("-out=/tmp/x"), func(a tfArgs) bool { return a.out == "/tmp/x" }},
		{"atlantis plan -- --out /tmp/x", oldPlan("--out", "/tmp/x"), func(a tfArgs) bool { return a.out == "/tmp/x" }},
		{"atlantis plan -- -input=true", oldPlan("-input=true"), func(a tfArgs) bool { return a.input }},
		{"atlantis plan -- -state=/tmp/s", oldPlan("-state=/tmp/s"), func(a tfArgs) bool { return a.state != "" }},
		{"atlantis apply -- -state-out=/tmp/x.tfstate -backup=/tmp/y", terraform.ApplyArgv("job.tfplan", []string{"-state-out=/tmp/x.tfstate", "-backup=/tmp/y"}),
			func(a tfArgs) bool { return a.stateOut != "" && a.backup != "" }},
		{"atlantis apply -- -lock=false", terraform.ApplyArgv("job.tfplan", []string{"-lock=false"}), func(a tfArgs) bool { return !a.lock }},
		{"atlantis apply -- /tmp/other.tfplan", terraform.ApplyArgv("job.tfplan", []string{"/tmp/other.tfplan"}),
			func(a tfArgs) bool { return len(a.positional) > 0 && a.positional[0] == "/tmp/other.tfplan" }},
		{"atlantis plan -- -v", oldPlan("-v"), func(a tfArgs) bool { return a.cliRewrite }},
	} {
		got, err := parseLikeTerraform(tc.argv)
		// The CLI layer acts on -v before the command's flags are parsed,
		// so the flag set's error does not matter there.
		if !tc.diverts(got) || (err != nil && !got.cliRewrite) {
			t.Errorf("%q: the model does not show the diversion (%+v, %v): the model is wrong or Terraform changed", tc.argv, got, err)
		}
		if _, err := (command.Parser{}).Parse(tc.comment); err == nil {
			t.Errorf("%q is accepted", tc.comment)
		}
	}
	// Atoll's flags now come last, so even without the allowlist a second
	// -out or -input loses; -state-out does not, which is why the allowlist
	// is the rule and the order only a second line.
	if got, _ := parseLikeTerraform(terraform.PlanArgv("job.tfplan", []string{"-out=/tmp/x", "-input=true"})); got.out != "job.tfplan" || got.input {
		t.Errorf("Atoll's own flags do not win: %+v", got)
	}
}

// Whatever a comment says after "--", if the grammar accepts it, Terraform
// reads Atoll's promises intact.
func FuzzTerraformArgs(f *testing.F) {
	for _, s := range []string{
		"-target=a.b -refresh=false", "--target a.b", "-var 'a=b c'", "-var x=-1", "-var-file=x.tfvars",
		"-out=/tmp/x", "--out /tmp/x", "-destroy -parallelism=3", "-lock-timeout 5m", "-- -out=x",
		"-var -out=x", "-target -out=x", "-refresh false", "-compact-warnings -no-color",
	} {
		for _, cmd := range []string{"plan", "apply", "import", "state"} {
			f.Add(cmd, s)
		}
	}
	p := command.Parser{}
	f.Fuzz(func(t *testing.T, name, args string) {
		var c string
		switch name {
		case "plan", "apply":
			c = "atlantis " + name + " -- " + args
		case "import":
			c = "atlantis import a.b id -- " + args
		case "state":
			c = "atlantis state rm a.b -- " + args
		default:
			return
		}
		cmd, err := p.Parse(c)
		if err != nil || cmd == nil || cmd.Name != name {
			return
		}
		keepsPromises(t, name, argvFor(name, cmd.ExtraArgs))
	})
}

// Real Terraform agrees with the model on the order: given a second -out
// after Atoll's (which the allowlist never lets through), it writes Atoll's
// plan file and nothing at the other path.
func TestPlanArgvOwnFlagsWinRealTerraform(t *testing.T) {
	tf := newRunner(t)
	dir := project(t, `resource "terraform_data" "x" { input = "a" }`)
	if err := tf.Init(t.Context(), dir, nil, nil); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "diverted.tfplan")
	own := filepath.Join(dir, "job.tfplan")
	if _, _, err := tf.Plan(t.Context(), dir, own, []string{"-out=" + elsewhere}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(own); err != nil {
		t.Errorf("Atoll's plan file was not written: %v", err)
	}
	if _, err := os.Stat(elsewhere); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the extra -out was written: %v", err)
	}
	if argv := terraform.PlanArgv("p", []string{"-target=a.b"}); !strings.HasSuffix(strings.Join(argv, " "), "-out=p") {
		t.Errorf("PlanArgv = %q: Atoll's -out is not last", argv)
	}
}

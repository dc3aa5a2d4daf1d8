package runner

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/procs"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/terraform"
)

func stepsTerraform(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ATOLL_TEST_TERRAFORM")
	if bin == "" {
		bin = "../bin/terraform"
	}
	bin, err := filepath.Abs(bin)
	if err == nil {
		_, err = exec.LookPath(bin)
	}
	if err != nil {
		t.Skipf("terraform binary not available (%v); run make or set ATOLL_TEST_TERRAFORM", err)
	}
	return bin
}

// stepsFixture is a checked-out project dir with a job and a log sink, as
// the executor hands them to a workflow's steps.
type stepsFixture struct {
	r    *Runner
	w    *work
	j    *atoll.Job
	sink *logSink
	dir  string
}

func newStepsFixture(t *testing.T, extraArgs ...string) *stepsFixture {
	t.Helper()
	t.Setenv("CHECKPOINT_DISABLE", "1")
	tmp := t.TempDir()
	db := storetest.Open(t, storetest.Path(filepath.Join(tmp, "atoll.db")))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := &Runner{DB: db, Hub: NewHub(), Logger: logger,
		Terraform: terraform.Runner{Bin: stepsTerraform(t), Procs: &procs.Registry{Dir: filepath.Join(tmp, "procs")}}}
	dir := filepath.Join(tmp, "checkout", "stacks", "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := &work{log: logger,
		repo: &atoll.Repo{Owner: "acme", Name: "infra"},
		pull: &atoll.Pull{Number: 42, HeadRef: "feature", BaseRef: "main", Author: "alice", URL: "https://github.example/acme/infra/pull/42"}}
	j := &atoll.Job{ID: 7, Kind: atoll.JobPlan, Repo: "acme/infra", Pull: 42, Project: "app", Dir: "stacks/app", Workspace: "staging",
		HeadSHA: "0123456789abcdef", User: "bob", Spec: atoll.JobSpec{ExtraArgs: extraArgs, Verbose: true}}
	sink := &logSink{r: r, hub: r.Hub, jobID: j.ID, logger: logger, verbose: true}
	return &stepsFixture{r: r, w: w, j: j, sink: sink, dir: dir}
}

func (f *stepsFixture) steps() *steps {
	return f.r.execution(f.w, f.j, f.sink).newSteps(f.dir, filepath.Join(f.dir, planFileName(f.j)))
}

func run(command string) atoll.Step { return atoll.Step{Name: "run", Command: command} }

// Run steps' output goes to the log and the comment as their output option
// says; strip_refreshing drops Terraform's refresh lines, filter_regex
// redacts as Atlantis does.
func TestRunStepOutput(t *testing.T) {
	const script = `echo 'null_resource.x: Refreshing state... [id=1]'; echo 'kept line'; echo 'password: "hunter2"'`
	cases := []struct {
		name      string
		step      atoll.Step
		want, not []string
	}{
		{"show", run(script), []string{"Refreshing state...", "kept line", "hunter2"}, nil},
		{"hide", atoll.Step{Name: "run", Command: script, Output: "hide"}, nil, []string{"kept line", "Refreshing", "hunter2"}},
		{"strip_refreshing", atoll.Step{Name: "run", Command: script, Output: "strip_refreshing"}, []string{"kept line", "hunter2"}, []string{"Refreshing"}},
		{"filter_regex", atoll.Step{Name: "run", Command: script, FilterRegex: []string{`(password: ")[^"]*(")`}}, []string{`password: "<redacted>"`, "kept line"}, []string{"hunter2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newStepsFixture(t)
			s := f.steps()
			if err := s.run(context.Background(), []atoll.Step{c.step}); err != nil {
				t.Fatalf("run: %v", err)
			}
			// The first line is the command, as configured.
			log := f.sink.Text()
			if cmd, rest, _ := strings.Cut(log, "\n"); cmd != "$ "+script {
				t.Errorf("first log line %q, want the command", cmd)
			} else {
				log = rest
			}
			for _, w := range c.want {
				if !strings.Contains(log, w) || !strings.Contains(s.output(), w) {
					t.Errorf("%q missing; log:\n%s\ncomment output:\n%s", w, log, s.output())
				}
			}
			for _, n := range c.not {
				if strings.Contains(log, n) || strings.Contains(s.output(), n) {
					t.Errorf("%q shown; log:\n%s\ncomment output:\n%s", n, log, s.output())
				}
			}
		})
	}
}

// A run step sees the variables Atlantis documents, those of earlier env
// and multienv steps, and the server's environment minus Atoll's secrets.
// Values from env commands never reach the log.
func TestStepsEnvironment(t *testing.T) {
	t.Setenv("VAULT_ADDR", "https://vault.example")
	t.Setenv("KUBECONFIG", "/kube/config")
	t.Setenv("ATOLL_GH_TOKEN", "sentinel-token")
	t.Setenv("ATOLL_REPLICA_SECRET_ACCESS_KEY", "sentinel-replica")
	f := newStepsFixture(t, "-target=a b", `x"y`)
	s := f.steps()
	value := "static"
	list := []atoll.Step{
		{Name: "env", EnvName: "STATIC", Value: &value},
		{Name: "env", EnvName: "FROM_CMD", Command: "echo secret-$PULL_NUM"},
		{Name: "multienv", Command: `echo 'M1=one,M2="two, \"quoted\"",M3=three'`},
		{Name: "run", Command: "env | sort", Shell: "bash", ShellArgs: []string{"-e", "-c"}},
	}
	if err := s.run(context.Background(), list); err != nil {
		t.Fatalf("run: %v", err)
	}
	v, err := f.r.TerraformVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, l := range strings.Split(s.output(), "\n") {
		if k, val, ok := strings.Cut(l, "="); ok {
			env[k] = val
		}
	}
	want := map[string]string{
		"WORKSPACE": "staging", "ATLANTIS_TERRAFORM_VERSION": v.String(), "DIR": f.dir,
		"PLANFILE": filepath.Join(f.dir, "app-staging.tfplan"), "SHOWFILE": filepath.Join(f.dir, "app-staging.json"),
		"POLICYCHECKFILE": filepath.Join(f.dir, "app-staging-policyout.json"),
		"BASE_REPO_NAME":  "infra", "BASE_REPO_OWNER": "acme", "HEAD_REPO_NAME": "infra", "HEAD_REPO_OWNER": "acme",
		"HEAD_BRANCH_NAME": "feature", "HEAD_COMMIT": "0123456789abcdef", "BASE_BRANCH_NAME": "main",
		"PROJECT_NAME": "app", "PULL_NUM": "42", "PULL_URL": "https://github.example/acme/infra/pull/42", "PULL_AUTHOR": "alice",
		"REPO_REL_DIR": "stacks/app", "USER_NAME": "bob",
		"COMMENT_ARGS": `\-\t\a\r\g\e\t\=\a\ \b,\x\"\y`,
		"STATIC":       "static", "FROM_CMD": "secret-42", "M1": "one", "M2": `two, "quoted"`, "M3": "three",
		"VAULT_ADDR": "https://vault.example", "KUBECONFIG": "/kube/config", "TF_IN_AUTOMATION": "1",
	}
	for k, w := range want {
		if env[k] != w {
			t.Errorf("%s = %q, want %q", k, env[k], w)
		}
	}
	if !strings.HasPrefix(env["PATH"], filepath.Dir(f.r.Terraform.Bin)+":") {
		t.Errorf("PATH = %q, want the terraform binary's directory first", env["PATH"])
	}
	if all := s.output() + f.sink.Text(); strings.Contains(all, "sentinel") {
		t.Errorf("an Atoll secret reached a run step:\n%s", all)
	}
	// The env and multienv values are in the run step's own output (it
	// printed them), never in what Atoll logs about the steps.
	before, _, _ := strings.Cut(f.sink.Text(), "$ env | sort")
	if strings.Contains(before, "secret-42") || strings.Contains(before, "quoted") {
		t.Errorf("an env value was logged:\n%s", before)
	}
	for _, w := range []string{"env: STATIC set", "env: FROM_CMD set from `echo secret-$PULL_NUM`", "Dynamic environment variables added:\nM1\nM2\nM3"} {
		if !strings.Contains(before, w) {
			t.Errorf("log lacks %q:\n%s", w, before)
		}
	}
}

// A failing command fails the stage at that step, with its output (even a
// hidden one) for the comment; later steps do not run.
func TestRunStepFails(t *testing.T) {
	f := newStepsFixture(t)
	s := f.steps()
	err := s.run(context.Background(), []atoll.Step{
		{Name: "run", Command: "echo broken; exit 4", Output: "hide"},
		run("touch later"),
	})
	if err == nil || !strings.Contains(atoll.ErrorMessage(err), "exit code 4") || !strings.Contains(atoll.ErrorMessage(err), "echo broken; exit 4") {
		t.Fatalf("err = %v (%q), want the command and its exit code", err, atoll.ErrorMessage(err))
	}
	if !strings.Contains(s.output(), "broken") {
		t.Errorf("output = %q, want the failing command's", s.output())
	}
	if _, err := os.Stat(filepath.Join(f.dir, "later")); err == nil {
		t.Error("a step after the failing one ran")
	}
	for _, c := range []struct {
		step atoll.Step
		says string
	}{
		{atoll.Step{Name: "env", EnvName: "X", Command: "echo vault: permission denied >&2; exit 2"}, "vault: permission denied"},
		{atoll.Step{Name: "multienv", Command: "echo 'not a list'"}, "invalid variable list"},
	} {
		err := f.steps().run(context.Background(), []atoll.Step{c.step})
		if err == nil || atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), c.says) {
			t.Errorf("%s %q: err = %v, want a user-visible failure saying %q", c.step.Name, c.step.Command, err, c.says)
		}
	}
}

// The plan step runs terraform with the step's extra_args and, as in
// Atlantis, env/WORKSPACE.tfvars when it exists; env steps reach Terraform.
func TestPlanStepVarFile(t *testing.T) {
	f := newStepsFixture(t)
	files := map[string]string{
		"main.tf": `variable "from_file" { type = string }
variable "from_env" { type = string }
output "both" { value = "${var.from_file}/${var.from_env}" }
`,
		"env/staging.tfvars": `from_file = "file-value"` + "\n",
	}
	for name, body := range files {
		p := filepath.Join(f.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if args := planArgs(f.dir, &atoll.Job{Workspace: "prod", Spec: atoll.JobSpec{ExtraArgs: []string{"-lock=false"}}}, []string{"-refresh=false"}); !reflect.DeepEqual(args, []string{"-refresh=false", "-lock=false"}) {
		t.Errorf("plan args without env/prod.tfvars = %q", args)
	}
	s := f.steps()
	value := "env-value"
	err := s.run(context.Background(), []atoll.Step{
		{Name: "env", EnvName: "TF_VAR_from_env", Value: &value},
		{Name: "init"},
		{Name: "plan", ExtraArgs: []string{"-refresh=false"}},
		{Name: "show"},
		run(`test -s "$SHOWFILE" && test -s "$PLANFILE" && terraform version -json | grep -q "$ATLANTIS_TERRAFORM_VERSION" && echo files-ok`),
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, f.sink.Text())
	}
	for _, w := range []string{`both = "file-value/env-value"`, "files-ok"} {
		if !strings.Contains(s.output(), w) {
			t.Errorf("output lacks %q:\n%s", w, s.output())
		}
	}
	if !strings.Contains(f.sink.Text(), "-refresh=false -var-file env/staging.tfvars") {
		t.Errorf("the log does not show the var file:\n%s", f.sink.Text())
	}
}

func TestParseMultienv(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{"", nil, false},
		{"A=1", []string{"A=1"}, false},
		{"A=1,B=2\n", []string{"A=1", "B=2"}, false},
		{"A=x=y,B=", []string{"A=x=y", "B="}, false},
		{`A="a,b",B='c,d'`, []string{"A=a,b", "B=c,d"}, false},
		{`A="say \"hi\" \\ ok"`, []string{`A=say "hi" \ ok`}, false},
		{"no equals", nil, true},
		{"A B=1", nil, true},
		{`A="open`, nil, true},
		{`A="x"y`, nil, true},
	}
	for _, c := range cases {
		got, err := parseMultienv(c.in)
		if (err != nil) != c.err || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("parseMultienv(%q) = %q, %v; want %q (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// Only atlantis.yaml's command reaches the shell: comment arguments are in
// COMMENT_ARGS alone, never on the command line.
func TestArgvHoldsOnlyTheConfiguredCommand(t *testing.T) {
	if got := argv(atoll.Step{Command: "make plan"}); !reflect.DeepEqual(got, []string{"sh", "-c", "make plan"}) {
		t.Errorf("argv = %q", got)
	}
	if got := argv(atoll.Step{Command: "x", Shell: "bash", ShellArgs: []string{"-eu", "-c"}}); !reflect.DeepEqual(got, []string{"bash", "-eu", "-c", "x"}) {
		t.Errorf("argv = %q", got)
	}
	f := newStepsFixture(t, "; touch pwned")
	s := f.steps()
	if err := s.run(context.Background(), []atoll.Step{run(`printf 'args: %s\n' "$COMMENT_ARGS"`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "pwned")); err == nil {
		t.Error("a comment argument was run")
	}
	if !strings.Contains(s.output(), `args: \;\ \t\o\u\c\h\ \p\w\n\e\d`) {
		t.Errorf("output = %q", s.output())
	}
}

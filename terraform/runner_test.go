package terraform_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/terraform"
)

func TestPlanCreate(t *testing.T) {
	t.Parallel()
	r, ctx := newRunner(t), context.Background()
	dir := project(t, oneResource)
	if err := r.Init(ctx, dir, nil, nil); err != nil {
		t.Fatalf("init: %v", err)
	}
	rec := record(t)
	out, changes, err := r.Plan(ctx, dir, "tfplan", nil, rec.emit)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if !changes {
		t.Error("hasChanges = false for a new resource")
	}
	if _, err := os.Stat(filepath.Join(dir, "tfplan")); err != nil {
		t.Errorf("plan file: %v", err)
	}
	if !strings.Contains(out, "Plan: 1 to add, 0 to change, 0 to destroy.") {
		t.Errorf("output lacks the plan line:\n%s", out)
	}
	js, err := r.ShowJSON(ctx, dir, "tfplan")
	if err != nil {
		t.Fatalf("show: %v", err)
	}
	if got, err := terraform.Summarize(js); err != nil || got != (atoll.Summary{Add: 1}) {
		t.Errorf("Summarize = %+v, %v; want 1 add", got, err)
	}
	if got, ok := terraform.ParseSummaryLine(out); !ok || got != (atoll.Summary{Add: 1}) {
		t.Errorf("ParseSummaryLine = %+v, %v", got, ok)
	}
	// The emitted lines, in order, are exactly the returned output.
	if got := rec.text(""); got != out {
		t.Errorf("emitted lines differ from output:\nemitted:\n%s\noutput:\n%s", got, out)
	}
	for _, l := range rec.all {
		if l.Stream != atoll.StreamStdout {
			t.Errorf("unexpected %s line %q", l.Stream, l.Text)
		}
	}
}

// TestTransitions applies one configuration, then plans another.
func TestTransitions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		before      string
		after       string
		want        atoll.Summary
		wantChanges bool
	}{
		{"no changes", oneResource, oneResource, atoll.Summary{}, false},
		{"update", oneResource, `resource "terraform_data" "a" { input = "bye" }`, atoll.Summary{Change: 1}, true},
		{"replace",
			`resource "terraform_data" "a" { triggers_replace = "v1" }`,
			`resource "terraform_data" "a" { triggers_replace = "v2" }`,
			atoll.Summary{Add: 1, Destroy: 1}, true},
		{"destroy", oneResource, `# nothing left`, atoll.Summary{Destroy: 1}, true},
		{"import", `# empty`, "import {\n  to = terraform_data.b\n  id = \"abc\"\n}\nresource \"terraform_data\" \"b\" {}\n",
			atoll.Summary{Import: 1}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, ctx := newRunner(t), context.Background()
			dir := project(t, tc.before)
			if err := r.Init(ctx, dir, nil, nil); err != nil {
				t.Fatalf("init: %v", err)
			}
			if _, _, err := r.Plan(ctx, dir, "first.tfplan", nil, nil); err != nil {
				t.Fatalf("plan: %v", err)
			}
			out, err := r.Apply(ctx, dir, "first.tfplan", nil, nil)
			if err != nil || !strings.Contains(out, "Apply complete!") {
				t.Fatalf("apply: %v\n%s", err, out)
			}
			writeTF(t, dir, tc.after)
			out, changes, err := r.Plan(ctx, dir, "second.tfplan", nil, nil)
			if err != nil {
				t.Fatalf("second plan: %v", err)
			}
			if changes != tc.wantChanges {
				t.Errorf("hasChanges = %v, want %v\n%s", changes, tc.wantChanges, out)
			}
			js, err := r.ShowJSON(ctx, dir, "second.tfplan")
			if err != nil {
				t.Fatalf("show: %v", err)
			}
			if got, err := terraform.Summarize(js); err != nil || got != tc.want {
				t.Errorf("Summarize = %+v, %v; want %+v", got, err, tc.want)
			}
			if got, ok := terraform.ParseSummaryLine(out); !ok || got != tc.want {
				t.Errorf("ParseSummaryLine = %+v, %v; want %+v\n%s", got, ok, tc.want, out)
			}
		})
	}
}

func TestApplyThenNoChanges(t *testing.T) {
	t.Parallel()
	r, ctx := newRunner(t), context.Background()
	dir := project(t, oneResource)
	if err := r.Init(ctx, dir, nil, nil); err != nil {
		t.Fatalf("init: %v", err)
	}
	if _, _, err := r.Plan(ctx, dir, "tfplan", nil, nil); err != nil {
		t.Fatalf("plan: %v", err)
	}
	rec := record(t)
	out, err := r.Apply(ctx, dir, "tfplan", nil, rec.emit)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if got, ok := terraform.ParseSummaryLine(out); !ok || got != (atoll.Summary{Add: 1}) {
		t.Errorf("apply summary = %+v, %v\n%s", got, ok, out)
	}
	if !strings.Contains(rec.text(atoll.StreamStdout), "Apply complete! Resources: 1 added") {
		t.Errorf("apply line not emitted:\n%s", rec.text(""))
	}
	out, changes, err := r.Plan(ctx, dir, "again", nil, nil)
	if err != nil || changes {
		t.Fatalf("re-plan: changes=%v err=%v\n%s", changes, err, out)
	}
	if !strings.Contains(out, "No changes.") {
		t.Errorf("re-plan output lacks No changes.:\n%s", out)
	}
}

func TestWorkspace(t *testing.T) {
	t.Parallel()
	r, ctx := newRunner(t), context.Background()
	dir := project(t, oneResource)
	if err := r.Init(ctx, dir, nil, nil); err != nil {
		t.Fatalf("init: %v", err)
	}
	current := func() string {
		t.Helper()
		out, err := r.Run(ctx, dir, []string{"workspace", "show"}, nil)
		if err != nil {
			t.Fatalf("workspace show: %v", err)
		}
		return strings.TrimSpace(out)
	}
	if err := r.SelectWorkspace(ctx, dir, atoll.DefaultWorkspace, nil); err != nil {
		t.Fatalf("select default: %v", err)
	}
	if err := r.SelectWorkspace(ctx, dir, "staging", nil); err != nil {
		t.Fatalf("create staging: %v", err)
	}
	if got := current(); got != "staging" {
		t.Fatalf("workspace = %q, want staging", got)
	}
	if _, _, err := r.Plan(ctx, dir, "tfplan", nil, nil); err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := r.Apply(ctx, dir, "tfplan", nil, nil); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate.d", "staging", "terraform.tfstate")); err != nil {
		t.Errorf("staging state: %v", err)
	}
	if err := r.SelectWorkspace(ctx, dir, "default", nil); err != nil {
		t.Fatalf("back to default: %v", err)
	}
	if got := current(); got != "default" {
		t.Errorf("workspace = %q, want default", got)
	}
	// Selecting an existing workspace is not an error.
	if err := r.SelectWorkspace(ctx, dir, "staging", nil); err != nil {
		t.Fatalf("select staging again: %v", err)
	}
	if _, changes, err := r.Plan(ctx, dir, "tfplan", nil, nil); err != nil || changes {
		t.Errorf("plan in staging again: changes=%v err=%v", changes, err)
	}
}

func TestSyntaxError(t *testing.T) {
	t.Parallel()
	r, ctx := newRunner(t), context.Background()
	dir := project(t, `resource "terraform_data" "a" { input = "x"`)
	rec := record(t)
	err := r.Init(ctx, dir, nil, rec.emit)
	var ee *terraform.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v, want *ExitError", err)
	}
	if ee.Code != 1 || ee.Command != "init" {
		t.Errorf("ExitError = %+v", ee)
	}
	if !strings.Contains(err.Error(), "exit code 1") || !strings.Contains(err.Error(), "Error: ") {
		t.Errorf("message %q lacks the exit code or diagnostic", err)
	}
	if stderr := rec.text(atoll.StreamStderr); !strings.Contains(stderr, "Error: ") || !strings.Contains(stderr, "main.tf line 1") {
		t.Errorf("stderr lines not emitted; got:\n%s", rec.text(""))
	}
}

func TestLongLinesAreSplit(t *testing.T) {
	t.Parallel()
	r, ctx := newRunner(t), context.Background()
	dir := project(t, "variable \"x\" {}\nresource \"terraform_data\" \"a\" { input = var.x }\n")
	// Terraform prints the value on one line; an é straddles a split point.
	// At over MaxOutput bytes, it also makes Run cut the returned output.
	long := strings.Repeat("a", terraform.MaxLine-32) + strings.Repeat("é", 100) + strings.Repeat("b", terraform.MaxOutput)
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars"), []byte(`x = "`+long+`"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Init(ctx, dir, nil, nil); err != nil {
		t.Fatalf("init: %v", err)
	}
	rec := record(t)
	out, _, err := r.Plan(ctx, dir, "tfplan", nil, rec.emit)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if len(out) > terraform.MaxOutput+200 || !strings.Contains(out, "lines of output omitted") {
		t.Errorf("output of %d bytes not cut to MaxOutput with a note", len(out))
	}
	// The start and the end, with the summary, are kept.
	if !strings.Contains(out, "Terraform will perform") || !strings.Contains(out, "Plan: 1 to add") {
		t.Error("cut output lost its start or end")
	}
	var joined strings.Builder
	for _, l := range rec.all {
		if len(l.Text) > terraform.MaxLine {
			t.Errorf("line of %d bytes", len(l.Text))
		}
		if !utf8.ValidString(l.Text) {
			t.Errorf("invalid UTF-8 in a line piece")
		}
		joined.WriteString(l.Text)
	}
	if !strings.Contains(joined.String(), long) {
		t.Error("the long value does not survive splitting")
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	// Cancel as terraform announces the command, which races with its start,
	// and once the command is surely running.
	for _, running := range []bool{false, true} {
		t.Run(fmt.Sprintf("running=%v", running), func(t *testing.T) {
			t.Parallel()
			testCancel(t, running)
		})
	}
}

func testCancel(t *testing.T, waitRunning bool) {
	r := newRunner(t)
	// A unique duration identifies this test's sleep among all processes.
	arg := fmt.Sprintf("30.%06d", rand.IntN(1e6))
	dir := project(t, `
resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "sleep `+arg+`"
  }
}
`)
	if err := r.Init(context.Background(), dir, nil, nil); err != nil {
		t.Fatalf("init: %v", err)
	}
	if _, _, err := r.Plan(context.Background(), dir, "tfplan", nil, nil); err != nil {
		t.Fatalf("plan: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started atomic.Int64
	emit := func(l terraform.Line) {
		if !strings.Contains(l.Text, "(local-exec): Executing") || started.Load() != 0 {
			return
		}
		started.Store(time.Now().UnixNano())
		if !waitRunning {
			cancel()
			return
		}
		go func() {
			for len(sleepers(arg)) == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			started.Store(time.Now().UnixNano())
			cancel()
		}()
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Apply(ctx, dir, "tfplan", nil, emit)
		done <- err
	}()
	select {
	case err := <-done:
		if started.Load() == 0 {
			t.Fatalf("apply ended before the provisioner ran: %v", err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(time.Unix(0, started.Load())); d > 5*time.Second {
			t.Errorf("apply took %v to stop after cancel", d)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("apply did not stop after cancel")
	}
	// The sleep must not outlive terraform, even if terraform started it
	// while shutting down; give such a late start time to happen.
	time.Sleep(time.Second)
	if pids := sleepers(arg); len(pids) > 0 {
		t.Errorf("sleep %s still running as %v", arg, pids)
	}
}

// sleepers lists live processes running "sleep arg".
func sleepers(arg string) []string {
	var pids []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, []byte("sleep\x00"+arg+"\x00")) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err == nil && !strings.Contains(string(st), ") Z ") {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

func TestEnvironmentIsFiltered(t *testing.T) {
	t.Setenv("ATOLL_GH_TOKEN", "sentinel-secret")
	t.Setenv("TF_WORKSPACE", "sentinel-workspace")
	t.Setenv("AWS_REGION", "test-region-1")
	t.Setenv("VAULT_ADDR", "https://vault.example")
	t.Setenv("KUBECONFIG", "/kube/config")
	t.Setenv("ATOLL_REPLICA_SECRET_ACCESS_KEY", "sentinel-replica")
	r := newRunner(t)
	r.Env = append(r.Env, "EXTRA_FROM_CONFIG=yes")
	ctx := context.Background()
	dir := project(t, `
resource "terraform_data" "env" {
  provisioner "local-exec" {
    command = "env"
  }
}
`)
	if err := r.Init(ctx, dir, nil, nil); err != nil {
		t.Fatalf("init: %v", err)
	}
	if _, _, err := r.Plan(ctx, dir, "tfplan", nil, nil); err != nil {
		t.Fatalf("plan: %v", err)
	}
	out, err := r.Apply(ctx, dir, "tfplan", nil, nil)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if strings.Contains(out, "sentinel") {
		t.Errorf("a parent secret reached terraform:\n%s", out)
	}
	for _, want := range []string{"PATH=", "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1", "AWS_REGION=test-region-1", "EXTRA_FROM_CONFIG=yes",
		"VAULT_ADDR=https://vault.example", "KUBECONFIG=/kube/config"} {
		if !strings.Contains(out, want) {
			t.Errorf("environment lacks %s:\n%s", want, out)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	v, err := r.Version(context.Background())
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(v) {
		t.Errorf("version = %q", v)
	}
}

func TestMissingBinary(t *testing.T) {
	r := terraform.Runner{Bin: filepath.Join(t.TempDir(), "no-terraform")}
	_, err := r.Run(context.Background(), t.TempDir(), []string{"version"}, nil)
	if err == nil || !strings.Contains(err.Error(), "terraform version") {
		t.Errorf("err = %v", err)
	}
}

// TestWorkspaceDataDir checks that a TF_DATA_DIR given in Env is where the
// selected workspace is looked up.
func TestWorkspaceDataDir(t *testing.T) {
	t.Parallel()
	r, ctx := newRunner(t), context.Background()
	r.Env = append(r.Env, "TF_DATA_DIR="+t.TempDir())
	dir := project(t, oneResource)
	if err := r.Init(ctx, dir, nil, nil); err != nil {
		t.Fatalf("init: %v", err)
	}
	for _, ws := range []string{"staging", "default"} {
		if err := r.SelectWorkspace(ctx, dir, ws, nil); err != nil {
			t.Fatalf("select %s: %v", ws, err)
		}
		out, err := r.Run(ctx, dir, []string{"workspace", "show"}, nil)
		if err != nil || strings.TrimSpace(out) != ws {
			t.Errorf("workspace show = %q, %v; want %s", out, err, ws)
		}
	}
}

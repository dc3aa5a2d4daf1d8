package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/procs"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/terraform"
)

// dirCheckouts serves one directory as every checkout.
type dirCheckouts string

func (d dirCheckouts) Checkout(context.Context, executor.Checkout) (string, error) {
	return string(d), nil
}

// lines is the runner's side of a job's events: it keeps the log lines
// and counts the applies it lets start.
type lines struct {
	mu       sync.Mutex
	text     []string
	applying int
}

func (l *lines) Applying(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.applying++
	return nil
}

func (l *lines) Write(stream, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = append(l.text, text)
}

// The executor is the seam a remote worker implements: given a spec that
// came over the wire (JSON) and a checkout, it plans a real project with
// Terraform and returns the plan, with no store, no VCS provider and no
// Runner; given that plan back, it applies it once the runner's Applying
// lets it.
func TestLocalExecutorPlans(t *testing.T) {
	bin := testTerraform(t)
	t.Setenv("CHECKPOINT_DISABLE", "1")
	tmp := t.TempDir()
	root := filepath.Join(tmp, "checkout")
	if err := os.MkdirAll(filepath.Join(root, "stacks", "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "stacks", "app", "main.tf"), []byte("resource \"terraform_data\" \"a\" {\n  input = \"x\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sent := executor.Spec{
		Job: executor.Job{ID: 1, Kind: atoll.JobPlan, Repo: "acme/infra", Pull: 42, Dir: "stacks/app", Workspace: atoll.DefaultWorkspace,
			HeadSHA: "0123456789abcdef", User: "alice"},
		Checkout: executor.Checkout{RequestID: 9, VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra", Pull: 42,
			Workspace: atoll.DefaultWorkspace, HeadSHA: "0123456789abcdef"},
		PullEnv: []string{"PULL_NUM=42"},
	}
	wire, err := json.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	var spec executor.Spec
	if err := json.Unmarshal(wire, &spec); err != nil {
		t.Fatal(err)
	}
	var e executor.Executor = &runner.LocalExecutor{
		Terraform: terraform.Runner{Bin: bin, Procs: &procs.Registry{Dir: filepath.Join(tmp, "procs")}},
		Checkouts: dirCheckouts(root),
	}
	log := &lines{}
	res, err := e.Run(context.Background(), spec, log)
	if err != nil {
		t.Fatalf("run: %v\nlog:\n%s", err, strings.Join(log.text, "\n"))
	}
	if res.Summary == nil || res.Summary.Add != 1 || res.Summary.Change != 0 || res.Summary.Destroy != 0 {
		t.Errorf("summary %+v, want 1 to add", res.Summary)
	}
	if len(res.Plan) == 0 || !json.Valid(res.ShowJSON) {
		t.Errorf("plan file %d bytes, show JSON valid %v", len(res.Plan), json.Valid(res.ShowJSON))
	}
	if !strings.Contains(res.Output, "terraform_data.a") {
		t.Errorf("output does not name the resource:\n%s", res.Output)
	}
	joined := strings.Join(log.text, "\n")
	for _, want := range []string{"Checking out acme/infra at", "$ terraform init", "$ terraform plan"} {
		if !strings.Contains(joined, want) {
			t.Errorf("log lacks %q:\n%s", want, joined)
		}
	}
	// The result goes back over the wire as it came.
	back, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got executor.Result
	if err := json.Unmarshal(back, &got); err != nil {
		t.Fatal(err)
	}
	if got.Summary == nil || *got.Summary != *res.Summary || string(got.Plan) != string(res.Plan) || got.Output != res.Output {
		t.Errorf("result changed on the wire")
	}

	// In the server's own process the comment need not wait for show
	// -json: the summary comes from plan's text and the JSON follows, made
	// from the same plan file.
	e.(*runner.LocalExecutor).DeferShow = true
	spec.Job.ID = 3
	deferred, err := e.Run(context.Background(), spec, log)
	if err != nil {
		t.Fatalf("deferred run: %v", err)
	}
	if deferred.ShowJSON != nil || deferred.ShowLater == nil || deferred.Summary == nil || *deferred.Summary != *res.Summary {
		t.Fatalf("deferred: JSON %d bytes, ShowLater set %v, summary %+v; want none, set, %+v", len(deferred.ShowJSON), deferred.ShowLater != nil, deferred.Summary, *res.Summary)
	}
	show, err := deferred.ShowLater(context.Background())
	if err != nil || !json.Valid(show) || !strings.Contains(string(show), `"terraform_data.a"`) {
		t.Fatalf("ShowLater: %v, %d bytes:\n%.300s", err, len(show), show)
	}
	// A plan file that changed after it was stored is not shown as its.
	planFile := filepath.Join(root, "stacks", "app", "default.tfplan")
	if err := os.WriteFile(planFile, []byte("another plan"), 0o600); err != nil {
		t.Fatal(err)
	}
	if show, err := deferred.ShowLater(context.Background()); err == nil || show != nil {
		t.Fatalf("ShowLater of a changed plan file: %d bytes, %v; want an error", len(show), err)
	}
	e.(*runner.LocalExecutor).DeferShow = false
	spec.Job.ID = 1

	// The stored plan is applied once the runner lets it start.
	apply := spec
	apply.Job.ID, apply.Job.Kind, apply.Plan = 2, atoll.JobApply, got.Plan
	if log.applying != 0 {
		t.Fatalf("a plan asked to apply")
	}
	res, err = e.Run(context.Background(), apply, log)
	if err != nil {
		t.Fatalf("apply: %v\nlog:\n%s", err, strings.Join(log.text, "\n"))
	}
	if log.applying != 1 {
		t.Errorf("Applying called %d times, want 1", log.applying)
	}
	if res.Summary == nil || res.Summary.Add != 1 {
		t.Errorf("apply summary %+v, want 1 added\n%s", res.Summary, res.Output)
	}
	if _, err := os.Stat(filepath.Join(root, "stacks", "app", "terraform.tfstate")); err != nil {
		t.Errorf("no state after the apply: %v", err)
	}
}

func (l *lines) Flush() error                    { return nil }
func (l *lines) Waiting(context.Context, string) {}

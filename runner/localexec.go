package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/terraform"
)

// LocalExecutor is the in-process executor.Executor: it runs a job's
// Terraform on this machine, in a checkout of this machine's work dirs. It
// knows nothing of the store, the pull request or the queue: what it needs
// beyond the spec is here, and Checkouts is the one thing it asks of the
// runner (a request's jobs share their checkouts).
type LocalExecutor struct {
	// Terraform is the server's Terraform runner (--terraform-bin, its
	// environment and process registry); the spec picks the binary and
	// adds the job's environment.
	Terraform terraform.Runner
	Checkouts Checkouts
	// Policies runs the policy sets (--enable-policy-checks); nil runs
	// none whatever the spec says.
	Policies *PolicyChecks
	// Version is the version of Terraform.Bin, for a spec that names no
	// version (cached by the caller); nil asks the binary once a job.
	Version func(context.Context) (*version.Version, error)
	// Path is what goes before PATH in run steps for a job running bin of
	// distribution dist (see Runner.terraformPath); nil adds nothing.
	Path   func(dist, bin string) []string
	Logger *slog.Logger
	// DeferShow lets a plan without policy checks be told on plan's own
	// summary: its Result has ShowLater instead of ShowJSON. Only a caller
	// in this process can call that, so a worker, which sends its result
	// over the wire, leaves it false.
	DeferShow bool
}

// Checkouts brings a work dir to a commit and returns its root.
type Checkouts interface {
	Checkout(ctx context.Context, c executor.Checkout) (root string, err error)
}

// Run runs one plan job (checkout, init, plan, show, policy checks) and
// returns the plan, its JSON and summary, and the policy results; or one
// apply job (checkout, init, the plan file, events.Applying, apply) and
// returns its output and summary.
func (e *LocalExecutor) Run(ctx context.Context, spec executor.Spec, events executor.Events) (executor.Result, error) {
	j := jobOf(spec.Job)
	x := e.execution(spec, j, events)
	switch j.Kind {
	case atoll.JobPlan:
		return x.plan(ctx, spec)
	case atoll.JobApply:
		return x.apply(ctx, spec, events)
	case atoll.JobImport, atoll.JobStateRm:
		return x.stateJob(ctx, spec)
	}
	return executor.Result{}, atoll.Errorf(atoll.EINTERNAL, "The executor does not run %s jobs.", j.Kind)
}

// jobOf is the job as the in-process code reads it.
func jobOf(sj executor.Job) *atoll.Job {
	return &atoll.Job{ID: sj.ID, Kind: sj.Kind, Repo: sj.Repo, Pull: sj.Pull, Project: sj.Project, Dir: sj.Dir,
		Workspace: sj.Workspace, HeadSHA: sj.HeadSHA, User: sj.User, Spec: sj.Spec}
}

// specJob is the job as an executor is given it.
func specJob(j *atoll.Job) executor.Job {
	return executor.Job{ID: j.ID, Kind: j.Kind, Repo: j.Repo, Pull: j.Pull, Project: j.Project, Dir: j.Dir,
		Workspace: j.Workspace, HeadSHA: j.HeadSHA, User: j.User, Spec: j.Spec}
}

// execution is one job's run on this machine: what init, the workflow
// steps and the policy checks share.
type execution struct {
	e        *LocalExecutor
	j        *atoll.Job
	tf       terraform.Runner // the job's binary, environment and credentials
	spec     executor.Terraform
	pullEnv  []string
	sink     executor.LogSink
	log      *slog.Logger
	custom   bool // custom_policy_check (see policySteps)
	versionM sync.Mutex
	version  *version.Version
}

func (e *LocalExecutor) execution(spec executor.Spec, j *atoll.Job, sink executor.LogSink) *execution {
	tf := e.Terraform
	if spec.Terraform.Bin != "" {
		tf.Bin = spec.Terraform.Bin
	}
	tf.RunEnv = spec.Terraform.RunEnv
	if len(spec.Terraform.Env) > 0 {
		tf.Env = append(append([]string{}, tf.Env...), spec.Terraform.Env...)
	}
	log := e.Logger
	if log == nil {
		log = slog.Default()
	}
	return &execution{e: e, j: j, tf: tf, spec: spec.Terraform, pullEnv: spec.PullEnv, sink: sink, log: log, custom: spec.CustomPolicyCheck}
}

// emit adapts the sink to terraform's line callback.
func (x *execution) emit(l terraform.Line) { x.sink.Write(l.Stream, l.Text) }

// terraformVersion is the version of the binary the job runs.
func (x *execution) terraformVersion(ctx context.Context) (*version.Version, error) {
	x.versionM.Lock()
	defer x.versionM.Unlock()
	if x.version != nil {
		return x.version, nil
	}
	if x.spec.Version != "" {
		v, err := version.NewVersion(x.spec.Version)
		if err != nil {
			return nil, fmt.Errorf("terraform version %q: %w", x.spec.Version, err)
		}
		x.version = v
		return v, nil
	}
	if x.e.Version != nil {
		return x.e.Version(ctx)
	}
	s, err := x.tf.Version(ctx)
	if err != nil {
		return nil, err
	}
	v, err := version.NewVersion(s)
	if err != nil {
		return nil, fmt.Errorf("terraform version %q: %w", s, err)
	}
	x.version = v
	return v, nil
}

// terraformPath is what goes before PATH in the job's run steps.
func (x *execution) terraformPath() []string {
	if x.e.Path == nil {
		return nil
	}
	return x.e.Path(x.spec.Distribution, x.tf.Bin)
}

// plan checks out the project, merges, inits, plans and shows, and runs
// the policy checks.
func (x *execution) plan(ctx context.Context, spec executor.Spec) (executor.Result, error) {
	var res executor.Result
	j := x.j
	root, dir, err := x.checkout(ctx, spec)
	if err != nil {
		return res, err
	}
	if spec.Checkout.MergeBase != "" {
		if res.BaseSHA, err = originTip(ctx, root, spec.Checkout.MergeBase); err != nil {
			return res, err
		}
	}
	planFile := filepath.Join(dir, planFileName(j))
	start := time.Now()
	var planText string // plan's own output, for its summary
	if j.Spec.PlanSteps != nil {
		// A plan file a pooled checkout kept from an earlier job must not
		// pass for this one's when the steps write none.
		if err := os.Remove(planFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("remove old plan file: %w", err)
		}
		if initFirst(j.Spec.PlanSteps) {
			if err := x.initProject(ctx, x.tf, dir, nil); err != nil {
				return res, err
			}
		}
		s := x.newSteps(dir, planFile)
		err := s.run(ctx, j.Spec.PlanSteps)
		res.Output, planText = s.output(), s.planText
		if err != nil {
			return res, err
		}
		if _, err := os.Stat(planFile); errors.Is(err, fs.ErrNotExist) {
			return fileless(res), nil
		} else if err != nil {
			return res, fmt.Errorf("plan file: %w", err)
		}
	} else {
		if err := x.initProject(ctx, x.tf, dir, j.Spec.InitArgs); err != nil {
			return res, err
		}
		// PlanArgs: jobs queued before workflows ran as steps.
		args := planArgs(dir, j, j.Spec.PlanArgs)
		if err := checkVarFiles(dir, j.Dir, args); err != nil {
			return res, err
		}
		x.sink.Write(atoll.StreamAtoll, commandLine(terraform.PlanArgv(planFileName(j), args)))
		out, _, err := x.tf.Plan(ctx, dir, planFile, args, x.emit)
		res.Output, planText = out, out
		if err != nil {
			return res, err
		}
	}
	x.log.Debug("terraform plan", "job", j.ID, "ms", time.Since(start).Milliseconds())
	file, err := os.ReadFile(planFile)
	if err != nil {
		return res, fmt.Errorf("read plan file: %w", err)
	}
	res.Plan = file
	if summary, ok := terraform.PlanSummary(planText); ok && x.e.DeferShow && !spec.PolicyCheck {
		// Policies read the JSON before anything is told; without them
		// the comment goes out on plan's own summary.
		res.Summary = &summary
		res.ShowLater = func(ctx context.Context) ([]byte, error) { return x.showLater(ctx, dir, planFile, file, summary) }
		return res, nil
	}
	show, err := x.tf.ShowJSON(ctx, dir, planFile)
	if err != nil {
		return res, err
	}
	x.log.Debug("terraform show", "job", j.ID, "ms", time.Since(start).Milliseconds())
	summary, err := summarize(show)
	if err != nil {
		return res, err
	}
	res.Summary = &summary
	if spec.PolicyCheck {
		checks, err := x.checkPolicies(ctx, dir, show)
		if err != nil {
			return res, err
		}
		res.Policies = checks
	}
	res.ShowJSON = show
	return res, nil
}

// showLater is `show -json` of a plan already stored and told: the plan
// file must still be the one stored, and the JSON must count what the
// plan's text said (else the JSON is still kept, and the mismatch is an
// error for the log).
func (x *execution) showLater(ctx context.Context, dir, planFile string, stored []byte, told atoll.Summary) ([]byte, error) {
	file, err := os.ReadFile(planFile)
	if err != nil {
		return nil, fmt.Errorf("plan JSON: read plan file: %w", err)
	}
	if !bytes.Equal(file, stored) {
		return nil, fmt.Errorf("plan JSON: the plan file of job %d changed after it was stored", x.j.ID)
	}
	show, err := x.tf.ShowJSON(ctx, dir, planFile)
	if err != nil {
		return nil, err
	}
	summary, err := summarize(show)
	if err != nil {
		return nil, err
	}
	if summary != told {
		return show, fmt.Errorf("plan JSON of job %d counts %+v where plan's text said %+v", x.j.ID, summary, told)
	}
	return show, nil
}

// fileless is the result of a plan stage whose steps wrote no plan file
// (only run or env steps, say): a success, as in Atlantis, whose output is
// the steps' and whose summary is Terraform's summary line when they
// printed one. Its empty Plan is what the runner stores and what apply
// checks (see Runner.applyChecked).
func fileless(res executor.Result) executor.Result {
	if s, ok := terraform.ParseSummaryLine(res.Output); ok {
		res.Summary = &s
	}
	res.Plan, res.ShowJSON = []byte{}, []byte{}
	return res
}

// checkout brings the job's checkout to its commit and returns the project
// dir.
func (x *execution) checkout(ctx context.Context, spec executor.Spec) (root, dir string, err error) {
	j := x.j
	x.sink.Write(atoll.StreamAtoll, fmt.Sprintf("Checking out %s at %s (workspace %s)", j.Repo, short(j.HeadSHA), j.Workspace))
	if root, err = x.e.Checkouts.Checkout(ctx, spec.Checkout); err != nil {
		return "", "", err
	}
	dir, err = projectDir(root, j)
	return root, dir, err
}

// apply applies spec.Plan once events.Applying allows it.
func (x *execution) apply(ctx context.Context, spec executor.Spec, events executor.Events) (executor.Result, error) {
	var res executor.Result
	j := x.j
	_, dir, err := x.checkout(ctx, spec)
	if err != nil {
		return res, err
	}
	// Init fails before the plan is marked applied: the plan stays.
	if initFirst(j.Spec.ApplySteps) {
		// InitArgs: jobs queued before workflows ran as steps.
		if err := x.initProject(ctx, x.tf, dir, j.Spec.InitArgs); err != nil {
			return res, err
		}
	}
	planFile := filepath.Join(dir, planFileName(j))
	if err := writePlanFile(planFile, spec.Plan); err != nil {
		return res, err
	}
	if err := events.Applying(ctx); err != nil {
		return res, err
	}
	if j.Spec.ApplySteps != nil {
		s := x.newSteps(dir, planFile)
		err = s.run(ctx, j.Spec.ApplySteps)
		res.Output = s.output()
	} else {
		// ApplyArgs: jobs queued before workflows ran as steps.
		args := append(append([]string{}, j.Spec.ApplyArgs...), j.Spec.ExtraArgs...)
		if err := checkVarFiles(dir, j.Dir, args); err != nil {
			return res, err
		}
		x.sink.Write(atoll.StreamAtoll, commandLine(terraform.ApplyArgv(planFileName(j), args)))
		res.Output, err = x.tf.Apply(ctx, dir, planFile, args, x.emit)
	}
	if s, ok := terraform.ParseSummaryLine(res.Output); ok {
		res.Summary = &s
	}
	return res, err
}

// stateJob runs an import or state rm job: its stage's steps, or the
// command alone.
func (x *execution) stateJob(ctx context.Context, spec executor.Spec) (executor.Result, error) {
	var res executor.Result
	j := x.j
	_, dir, err := x.checkout(ctx, spec)
	if err != nil {
		return res, err
	}
	steps, initArgs := j.Spec.ImportSteps, j.Spec.InitArgs
	if j.Kind == atoll.JobStateRm {
		steps = j.Spec.StateRmSteps
	}
	if steps != nil {
		initArgs = nil
	}
	if initFirst(steps) {
		if err := x.initProject(ctx, x.tf, dir, initArgs); err != nil {
			return res, err
		}
	}
	if steps == nil {
		steps = []atoll.Step{{Name: j.Kind}}
	}
	planFile := filepath.Join(dir, planFileName(j))
	s := x.newSteps(dir, planFile)
	err = s.run(ctx, steps)
	res.Output = s.output()
	if err != nil {
		return res, err
	}
	// A plan file a pooled checkout kept is as stale as the stored plan.
	if err := os.Remove(planFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("remove plan file: %w", err)
	}
	return res, nil
}

// projectDir is the job's project dir in the checkout at root, refused
// when it is missing or leads outside the checkout.
func projectDir(root string, j *atoll.Job) (string, error) {
	dir := filepath.Join(root, filepath.FromSlash(j.Dir))
	if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
		return "", atoll.Errorf(atoll.EINVALID, "Directory %q is outside the repository.", j.Dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", atoll.Errorf(atoll.EINVALID, "Directory %q does not exist at %s.", j.Dir, short(j.HeadSHA))
	}
	// A symbolic link committed to the repository could lead Terraform,
	// and the .terraform directory it writes, anywhere on the server.
	if ok, err := inside(root, dir); err != nil || !ok {
		return "", atoll.Errorf(atoll.EINVALID, "Directory %q leads outside the repository through a symbolic link.", j.Dir)
	}
	return dir, nil
}

// writePlanFile puts an apply's stored plan at $PLANFILE. A plan whose
// stage wrote none is stored empty: then no file is there for the apply
// stage's steps (not even one a pooled checkout kept from another job).
func writePlanFile(planFile string, plan []byte) error {
	if len(plan) == 0 {
		if err := os.Remove(planFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove old plan file: %w", err)
		}
		return nil
	}
	if err := os.WriteFile(planFile, plan, 0o600); err != nil {
		return fmt.Errorf("write plan file: %w", err)
	}
	return nil
}

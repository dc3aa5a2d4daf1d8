package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/vcs"
)

// plan runs a plan request: autoplan or an "atlantis plan" comment.
func (r *Runner) plan(ctx context.Context, w *work, cmd *command.Command, autoplan bool) error {
	jobs, err := r.DB.RequestJobs(ctx, w.req.ID)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		// A request that stopped before making jobs resolves again.
		jobs, err = r.resolvePlan(ctx, w, cmd, autoplan)
		if err != nil {
			return r.fail(ctx, w, "plan", err)
		}
		if len(jobs) > 0 && !autoplan {
			r.discardApprovals(ctx, w)
		}
	}
	sha := w.pull.HeadSHA
	if len(jobs) > 0 {
		sha = jobs[0].HeadSHA
	}
	if len(jobs) == 0 {
		if r.silenceNoProjectStatus(autoplan) {
			w.log.Info("no projects: no commit status (--silence-vcs-status-no-plans, --silence-vcs-status-no-projects)")
		} else {
			r.reporter().status(ctx, w, sha, "plan", "", vcs.StatusSuccess, "0/0 projects planned: no Terraform changes.", "")
			// Nothing to apply either: required apply checks must pass.
			r.reporter().status(ctx, w, sha, "apply", "", vcs.StatusSuccess, "0/0 projects applied successfully.", "")
		}
		if autoplan || r.SilenceNoProjects {
			return nil
		}
		return r.reporter().reply(ctx, w, "plan", "Ran Plan for 0 projects: no modified Terraform projects were found in this pull request.")
	}
	r.reporter().status(ctx, w, sha, "plan", "", vcs.StatusPending, fmt.Sprintf("Planning %d project(s)...", len(jobs)), r.reporter().pullURL(w))
	err = r.report(ctx, w, "plan", sha, r.runPlans(ctx, w, jobs))
	r.policyStatuses(ctx, w, sha)
	// Plans without changes may complete the pull request's apply status.
	r.setApplyStatus(ctx, w, sha, false)
	return err
}

// fail reports a request-level failure (bad config, checkout failure) on the
// pull request and in the aggregate status.
func (r *Runner) fail(ctx context.Context, w *work, command string, err error) error {
	ctx, cancel := reportContext(ctx)
	defer cancel()
	if errors.Is(err, errForkPR) && r.SilenceForkPRErrors {
		w.log.Info(command + " refused: pull request from a fork (not commented: --silence-fork-pr-errors)")
		return nil
	}
	w.log.Error(command+" failed", "err", err)
	if cerr := r.reporter().failure(ctx, w, command, err); cerr != nil {
		return fmt.Errorf("%w (and commenting failed: %v)", err, cerr)
	}
	return err
}

// errForkPR refuses a pull request from a fork without --allow-fork-prs.
var errForkPR = atoll.Errorf(atoll.EFORBIDDEN, "Atoll does not run on pull requests from forks: this server was not started with --allow-fork-prs.")

// refresh fetches the pull request from the VCS and stores what changed.
func (r *Runner) refresh(ctx context.Context, w *work) (*vcs.PullDetails, error) {
	d, err := w.vcs.GetPull(ctx, *w.repo, w.pull.Number)
	if err != nil {
		return nil, err
	}
	if d.Fork && !r.AllowForkPRs {
		return nil, errForkPR
	}
	// Parallel jobs refresh and check out at once: the pull's fields are
	// read and written under the work's lock.
	w.mu.Lock()
	defer w.mu.Unlock()
	if d.HeadSHA != w.pull.HeadSHA || d.BaseSHA != w.pull.BaseSHA {
		err := r.commit("refresh pull", func(ctx context.Context) error {
			return r.DB.UpdatePull(ctx, w.repo.ID, atoll.Pull{Number: d.Number, HeadSHA: d.HeadSHA, BaseSHA: d.BaseSHA, HeadRef: d.HeadRef, BaseRef: d.BaseRef, State: d.State})
		})
		if err != nil {
			return nil, err
		}
		w.pull.HeadSHA, w.pull.BaseSHA = d.HeadSHA, d.BaseSHA
	}
	if d.HeadRef != "" {
		w.pull.HeadRef, w.pull.BaseRef = d.HeadRef, d.BaseRef
	}
	w.last = d
	return d, nil
}

// resolvePlan checks out the head, reads atlantis.yaml, selects projects and
// queues one plan job per project.
func (r *Runner) resolvePlan(ctx context.Context, w *work, cmd *command.Command, autoplan bool) ([]*atoll.Job, error) {
	start := time.Now()
	explicit := cmd.Dir != "" || cmd.Workspace != "" || cmd.Project != ""
	// The changed files are asked for while the pull request is fetched
	// and checked out: one round trip less before the plan starts.
	type changedFiles struct {
		files []string
		err   error
	}
	changedCh := make(chan changedFiles, 1)
	if !explicit {
		go func() {
			files, err := w.vcs.ChangedFiles(ctx, *w.repo, w.pull.Number)
			changedCh <- changedFiles{files, err}
		}()
	}
	if _, err := r.refreshOnce(ctx, w); err != nil {
		return nil, err
	}
	w.log.Debug("refresh pull", "ms", time.Since(start).Milliseconds())
	root, err := r.checkout(ctx, w, atoll.DefaultWorkspace, w.pull.HeadSHA)
	if err != nil {
		return nil, err
	}
	cfg, err := r.loadConfig(w, root)
	if err != nil {
		return nil, err
	}
	r.reporter().warnConfig(ctx, w, cfg)
	var projects []repocfg.Project
	if explicit {
		projects, err = r.findTargeted(ctx, w, cfg, root, cmd)
	} else {
		// Autoplan skips projects with autoplan disabled; a plan comment
		// plans every modified project, as in Atlantis.
		sel := repocfg.Modified
		if autoplan {
			sel = repocfg.Select
		}
		changed := <-changedCh
		if err = changed.err; err == nil {
			projects, err = sel(cfg, root, changed.files)
		}
	}
	if err != nil {
		return nil, err
	}
	projects = r.authzPlanProjects(ctx, w, cmd.Name, root, projects)
	w.log.Debug("projects selected", "projects", len(projects), "ms", time.Since(start).Milliseconds())
	kind, err := resolvedKind(cmd, len(projects))
	if err != nil {
		return nil, err
	}
	jobs, err := r.planJobs(w, cfg, projects, cmd, kind, autoplan)
	if err != nil {
		return nil, err
	}
	err = r.DB.QueueProjectJobs(ctx, w.repo.ID, jobs)
	return jobs, err
}

// planJobs are the jobs of kind for projects, not yet queued.
func (r *Runner) planJobs(w *work, cfg *repocfg.Config, projects []repocfg.Project, cmd *command.Command, kind string, autoplan bool) ([]*atoll.Job, error) {
	// The projects are recorded with their jobs (the store sets ProjectID).
	var jobs []*atoll.Job
	for _, p := range projects {
		j := &atoll.Job{Kind: kind, RequestID: w.req.ID, PullID: w.pull.ID,
			HeadSHA: w.pull.HeadSHA, User: w.req.User, Repo: w.repo.FullName(), Pull: w.pull.Number,
			Project: p.Name, Dir: p.Dir, Workspace: p.Workspace,
			Spec: atoll.JobSpec{ExtraArgs: cmd.ExtraArgs, Verbose: cmd.Verbose, Workflow: p.Workflow,
				TerraformVersion: p.TerraformVersion, TerraformDistribution: p.TerraformDistribution, ApplyRequirements: p.ApplyRequirements,
				PlanRequirements: p.PlanRequirements, Autoplan: autoplan,
				ImportRequirements: p.ImportRequirements, Args: cmd.Args,
				Parallel: repocfg.Setting(cfg.ParallelPlan, r.ParallelPlan) && kind == atoll.JobPlan, ParallelApply: repocfg.Setting(cfg.ParallelApply, r.ParallelApply),
				Automerge: repocfg.Setting(cfg.Automerge, r.Automerge), DeleteSourceBranch: p.DeleteSourceBranchOnMerge != nil && *p.DeleteSourceBranchOnMerge,
				SilencePRComments: p.SilencePRComments, Group: p.ExecutionOrderGroup, DependsOn: p.DependsOn,
				AbortOnOrderFail: cfg != nil && cfg.AbortOnExecutionOrderFail, LockMode: r.lockModeFor(p), CustomPolicyCheck: p.CustomPolicyCheck,
				PolicyCheck: p.PolicyCheck, Pool: p.ExecutionPool}}
		if err := applyWorkflow(cfg, p, &j.Spec, r.Parser); err != nil {
			return nil, err
		}
		if err := checkStage(kind, j.Spec); err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// runPlan runs one plan job whose lock its request took: init, plan, store
// the plan file.
func (r *Runner) runPlan(ctx context.Context, w *work, j *atoll.Job, sink *logSink, res *atoll.ProjectResult) error {
	if len(j.Spec.PlanRequirements) > 0 {
		d, err := r.refresh(ctx, w)
		if err != nil {
			return err
		}
		if err := r.checkRequirements(ctx, w, d, j, "plan"); err != nil {
			// Refused before planning: a lock the pull request held
			// before (with its plan) stays, one taken for this plan
			// goes back.
			if j.Spec.LockTaken {
				r.releaseFailed(w, j, sink, "plan refused")
			}
			return err
		}
	}
	if err := r.planLocked(ctx, w, j, sink, res); err != nil {
		// As in Atlantis, a failed plan gives up its lock (and with it any
		// older plan of the project), so one broken pull request does not
		// block the others. The request took every lock up front; the
		// failed project's alone is given back, the others stay with
		// their plans. A plan that took no lock (on_apply, disabled) has
		// none to give back: a lock its pull request holds from an apply
		// stays, as in Atlantis.
		if needsLock(j) {
			r.releaseFailed(w, j, sink, "plan failed")
		}
		return err
	}
	return nil
}

// releaseFailed gives up the lock of a plan that failed or was refused.
func (r *Runner) releaseFailed(w *work, j *atoll.Job, sink *logSink, reason string) {
	rerr := r.commit("release lock of failed plan", func(ctx context.Context) error {
		_, err := r.DB.ReleaseLocksWhere(ctx, atoll.LockSelector{PullID: j.PullID, ProjectID: j.ProjectID}, j.User, w.req.Source, "lock.release", reason)
		return err
	})
	if rerr != nil {
		w.log.Error("release lock of failed plan", "job", j.ID, "err", rerr)
		return
	}
	sink.Write(atoll.StreamAtoll, "The plan did not succeed: the project's lock was released.")
}

// planLocked plans a project whose lock the pull request holds: the
// executor checks out, inits, plans and shows, and runs the policy checks;
// one commit stores the plan file with the job's success.
func (r *Runner) planLocked(ctx context.Context, w *work, j *atoll.Job, sink *logSink, res *atoll.ProjectResult) error {
	if err := r.useTerraform(ctx, w, j, sink); err != nil {
		return err
	}
	spec := r.execSpec(w, j)
	out, err := r.executorFor(j).Run(ctx, spec, r.events(w, j, sink, nil))
	if err == nil && len(out.Plan) == 0 {
		err = needsPlanFile(j, spec.PolicyCheck, w.pull.State == atoll.PullDrift)
	}
	if err == nil && spec.PolicyCheck && remote(j) {
		// A worker runs no policies: the sets and conftest stay with the
		// control plane, which checks the plan's JSON (policy.go).
		out.Policies, err = r.remotePolicies(ctx, w, j, spec, sink, out.ShowJSON)
	}
	res.Output, res.Summary, res.Policies = out.Output, out.Summary, out.Policies
	if out.BaseSHA != "" {
		// The base the checkout was merged onto: stored with the plan for
		// the undiverged requirement of its apply.
		j.Spec.BaseSHA = out.BaseSHA
		var merr error
		if res.MergedAgain, merr = r.mergedAgain(ctx, j); merr != nil && err == nil {
			err = merr
		}
	}
	if err != nil {
		return err
	}
	var summary atoll.Summary
	if out.Summary != nil {
		summary = *out.Summary
	} else {
		// A plan stage without a plan file and without Terraform's summary
		// line: what it changes is unknown, so the comment says neither
		// "No changes" nor a count.
		res.HasChanges = true
	}
	checks := out.Policies
	// A plan stage that wrote no plan file is stored with an empty one.
	plan := &atoll.Plan{JobID: j.ID, PullID: j.PullID, ProjectID: j.ProjectID, HeadSHA: j.HeadSHA, Summary: summary, File: out.Plan, ShowJSON: out.ShowJSON}
	// The log is complete before the job is seen as finished; the plan and
	// the job's success are one commit: no one is told of an unstored plan.
	if err := sink.Flush(); err != nil {
		return err
	}
	// A plan made under its lock is kept only while the lock is held; one
	// made without (on_apply, disabled) is not tied to a lock.
	result := atoll.PlanResult{Job: j, Plan: plan, Checks: checks, Summary: summary, Unlocked: !needsLock(j),
		Event: func(plan *atoll.Plan) atoll.Event {
			return atoll.Event{Actor: j.User, Action: "plan.store", Repo: j.Repo, Pull: j.Pull, Source: w.req.Source,
				Detail: fmt.Sprintf("%s: %d to add, %d to change, %d to destroy (sha256 %s)", projectLabel(j.Dir, j.Workspace, j.Project), summary.Add, summary.Change, summary.Destroy, plan.SHA256[:12])}
		}}
	if err := r.commit("store plan", func(ctx context.Context) error { return r.DB.StorePlan(ctx, result) }); err != nil {
		return err
	}
	if out.ShowLater != nil {
		w.showLater(plan.ID, j.ID, out.ShowLater)
	}
	return nil
}

// needsPlanFile refuses a plan whose workflow wrote no plan file when
// something must read it: policy checks (Atlantis's shows the plan file
// first, and fails without one) or a drift check (the steps' output
// cannot be trusted to say what differs). Else such a plan is kept.
func needsPlanFile(j *atoll.Job, policies, drift bool) error {
	what := "Policy checks need"
	switch {
	case drift:
		what = "Drift detection needs"
	case !policies:
		return nil
	}
	return atoll.Errorf(atoll.EINVALID, "%s a plan file, and workflow %q wrote none: its plan stage needs a plan step, or a run step that writes $PLANFILE.", what, cmp.Or(j.Spec.Workflow, repocfg.DefaultWorkflow))
}

func planFileName(j *atoll.Job) string {
	if j.Project != "" {
		return safeName(j.Project) + "-" + j.Workspace + ".tfplan"
	}
	return j.Workspace + ".tfplan"
}

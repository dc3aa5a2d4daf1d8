package runner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/vcs"
	"github.com/bmatcuk/doublestar/v4"
)

// apply runs an "atlantis apply" comment: each selected project's stored plan
// is applied, if it was made for the pull request's current head.
func (r *Runner) apply(ctx context.Context, w *work, cmd *command.Command) error {
	jobs, err := r.DB.RequestJobs(ctx, w.req.ID)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		// A freeze refuses the whole command before anything is queued;
		// jobs of a resumed request meet it in runApply.
		if f, err := r.DB.Freeze(ctx); err != nil {
			return err
		} else if refused := f.Refusal(); refused != nil {
			return r.reporter().reply(ctx, w, "apply", "**Apply refused**: "+atoll.ErrorMessage(refused))
		}
		if jobs, err = r.resolveApply(ctx, w, cmd); err != nil {
			return r.fail(ctx, w, "apply", err)
		}
	}
	if len(jobs) == 0 {
		return r.reporter().reply(ctx, w, "apply", fmt.Sprintf("Ran Apply for 0 projects: there are no unapplied plans%s. Run `%s plan` first.",
			selectionText(cmd), r.Parser.ExecutableName))
	}
	r.reporter().status(ctx, w, w.pull.HeadSHA, "apply", "", vcs.StatusPending, fmt.Sprintf("Applying %d project(s)...", len(jobs)), r.reporter().pullURL(w))
	outcomes := r.runLocked(ctx, w, jobs, r.runApply) // locks: with on_apply
	if err := r.report(ctx, w, "apply", w.pull.HeadSHA, outcomes); err != nil {
		return err
	}
	return r.automerge(ctx, w, cmd, outcomes)
}

func selectionText(cmd *command.Command) string {
	switch {
	case cmd.Project != "":
		return fmt.Sprintf(" for project `%s`", cmd.Project)
	case cmd.Dir != "" || cmd.Workspace != "":
		return fmt.Sprintf(" for dir `%s` workspace `%s`", orDefault(cmd.Dir, "."), orDefault(cmd.Workspace, atoll.DefaultWorkspace))
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// resolveApply queues one apply job per pending plan the command selects.
func (r *Runner) resolveApply(ctx context.Context, w *work, cmd *command.Command) ([]*atoll.Job, error) {
	if _, err := r.refresh(ctx, w); err != nil {
		return nil, err
	}
	plans, err := r.DB.PendingPlans(ctx, w.pull.ID)
	if err != nil {
		return nil, err
	}
	var selected []*atoll.Job
	for _, p := range plans {
		pj, err := r.DB.Job(ctx, p.JobID)
		if err != nil {
			return nil, err
		}
		if !selects(cmd, pj) {
			continue
		}
		spec := pj.Spec
		spec.ExtraArgs, spec.Verbose, spec.PlanID, spec.Autoplan = cmd.ExtraArgs, cmd.Verbose, p.ID, false
		spec.Parallel, spec.LockTaken = pj.Spec.ParallelApply, false
		selected = append(selected, &atoll.Job{Kind: atoll.JobApply, RequestID: w.req.ID, PullID: w.pull.ID, ProjectID: pj.ProjectID,
			HeadSHA: p.HeadSHA, User: w.req.User, Repo: pj.Repo, Pull: pj.Pull, Project: pj.Project, Dir: pj.Dir, Workspace: pj.Workspace, Spec: spec})
	}
	selected = r.authzApplyJobs(ctx, w, selected)
	err = r.DB.InsertJobs(ctx, selected)
	return selected, err
}

func selects(cmd *command.Command, j *atoll.Job) bool {
	switch {
	case cmd.ProjectRegexp != nil:
		return j.Project != "" && cmd.ProjectRegexp.MatchString(j.Project)
	case cmd.Project != "":
		return j.Project == cmd.Project
	case cmd.Dir != "" || cmd.Workspace != "":
		dir := j.Dir == orDefault(cmd.Dir, ".")
		if command.IsDirPattern(cmd.Dir) {
			dir, _ = doublestar.Match(cmd.Dir, j.Dir) // validated by the parser
		}
		return dir && j.Workspace == orDefault(cmd.Workspace, atoll.DefaultWorkspace)
	}
	return true
}

// runApply applies one stored plan. The plan is marked applied in the store
// before Terraform starts, so it can never be applied twice, and an apply
// that is interrupted is never retried.
func (r *Runner) runApply(ctx context.Context, w *work, j *atoll.Job, sink *logSink, res *atoll.ProjectResult) error {
	if j.State == atoll.JobRunning {
		// A worker holds it across a failover: the checks ran before it
		// was dispatched, and StartApply checks again if it was not yet
		// allowed to start.
		return r.applyChecked(ctx, w, j, sink, res)
	}
	if j.Spec.Drift {
		return r.reconcileApply(ctx, w, j, sink, res)
	}
	d, err := r.refresh(ctx, w)
	if err != nil {
		return err
	}
	if d.HeadSHA != j.HeadSHA {
		return atoll.Errorf(atoll.ECONFLICT, "This plan was made for commit %s but the pull request's head is now %s. Run `%s plan` again to plan the new commit.",
			short(j.HeadSHA), short(d.HeadSHA), r.Parser.ExecutableName)
	}
	if err := r.checkDependencies(ctx, w, j); err != nil {
		return err
	}
	// The approval first: when it is missing, its message (with the plan's
	// page) says what to do, also for the approved requirement it satisfies
	// on a local repository.
	approval, err := r.approvalBeforeApply(ctx, j)
	if err != nil {
		return r.approvalLink(res, j, err)
	}
	res.ApprovedBy = approvedBy(approval)
	if err := r.policiesBeforeApply(ctx, w, j); err != nil {
		return err
	}
	if err := r.checkRequirements(ctx, w, d, j, "apply"); err != nil {
		return err
	}
	if err := r.checkStale(ctx, w, d, j); err != nil {
		return err
	}
	return r.applyChecked(ctx, w, j, sink, res)
}

// applyChecked applies the job's plan once the checks before it passed.
func (r *Runner) applyChecked(ctx context.Context, w *work, j *atoll.Job, sink *logSink, res *atoll.ProjectResult) error {
	var approval *atoll.Approval
	file, err := r.DB.PlanFile(ctx, j.Spec.PlanID)
	if err != nil {
		return err
	}
	if err := checkStage(atoll.JobApply, j.Spec); err != nil {
		return err
	}
	if len(file) == 0 && appliesPlanFile(j.Spec.ApplySteps) {
		// Before the plan is marked applied: it stays, and a workflow
		// whose apply stage only runs commands can still apply it.
		return atoll.Errorf(atoll.EINVALID, "Workflow %q wrote no plan file when it planned (its plan stage has no plan step and no run step writing $PLANFILE), so its apply stage's apply step has nothing to apply. Give the plan stage a plan step, or make the apply stage run its own commands.", cmp.Or(j.Spec.Workflow, repocfg.DefaultWorkflow))
	}
	if err := r.useTerraform(ctx, w, j, sink); err != nil {
		return err
	}
	spec := r.execSpec(w, j)
	spec.Plan = file
	// The executor checks out and inits, then asks startApply before
	// Terraform changes anything: init fails before the plan is marked
	// applied, and the plan stays.
	startApply := func(ctx context.Context) error {
		start := atoll.ApplyStart{PlanID: j.Spec.PlanID, JobID: j.ID, Unlocked: lockMode(j) == repocfg.LockDisabled,
			Approve: func(ref *atoll.PlanRef, decision *atoll.Approval, now time.Time) (*atoll.Approval, error) {
				return r.checkApproval(j, ref, decision, now)
			},
			Event: func(approval *atoll.Approval) atoll.Event {
				detail := fmt.Sprintf("%s: plan %d", projectLabel(j.Dir, j.Workspace, j.Project), j.Spec.PlanID)
				if approval != nil {
					detail += fmt.Sprintf(", approved by %s (approval %d)", approvedBy(approval), approval.ID)
				}
				return atoll.Event{Actor: j.User, Action: "apply.start", Repo: j.Repo, Pull: j.Pull, Detail: detail, Source: w.req.Source}
			}}
		// A --clear-policy-approval committed after the first check still
		// stops it: the checks are read again in the transaction.
		if r.policiesOn(w, j) {
			start.Policies = func(checks []atoll.PolicyCheck) error { return r.policiesBlock(w, j, checks) }
		}
		err := r.commit("start apply", func(ctx context.Context) (err error) {
			approval, err = r.DB.StartApply(ctx, start)
			return err
		})
		if err != nil {
			return r.approvalLink(res, j, err)
		}
		res.ApprovedBy = approvedBy(approval)
		w.applyRan(j.ID)
		return nil
	}
	out, err := r.executorFor(j).Run(ctx, spec, r.events(w, j, sink, startApply))
	res.Output, res.Summary = out.Output, out.Summary
	if err != nil {
		return err
	}
	// The log is complete before the job is seen as finished.
	if err := sink.Flush(); err != nil {
		return err
	}
	notes, err := r.notifications(w, j, true)
	if err != nil {
		return err
	}
	err = r.commit("finish apply", func(ctx context.Context) error {
		return r.DB.FinishJob(ctx, j.ID, atoll.JobSucceeded, "", res.Summary, notes)
	})
	if err == nil {
		r.wakeNotifications()
	}
	return err
}

// automerge merges the pull request when atlantis.yaml asks for it and every
// plan of the pull request has been applied successfully.
func (r *Runner) automerge(ctx context.Context, w *work, cmd *command.Command, outcomes []outcome) error {
	if len(outcomes) == 0 || !outcomes[0].job.Spec.Automerge || cmd.AutoMergeDisabled {
		return nil
	}
	for _, o := range outcomes {
		if !o.final || o.res.Error != "" {
			return nil
		}
	}
	if pending, err := r.DB.PendingPlans(ctx, w.pull.ID); err != nil || len(pending) > 0 {
		return err
	}
	if labeled, err := r.automergeLabeled(ctx, w); labeled || err != nil {
		return err
	}
	// The merge names the commit that was applied, so that a push since is
	// not merged unplanned where the host can check it.
	applied := outcomes[0].job.HeadSHA
	for _, o := range outcomes[1:] {
		if o.job.HeadSHA != applied {
			return r.reporter().reply(ctx, w, "automerge", fmt.Sprintf("Not automatically merged: this apply ran on two commits (%s and %s).", short(applied), short(o.job.HeadSHA)))
		}
	}
	opts := vcs.MergeOptions{Method: orDefault(cmd.AutoMergeMethod, orDefault(r.AutomergeMethod, "merge")), DeleteSourceBranch: outcomes[0].job.Spec.DeleteSourceBranch, HeadSHA: applied}
	return r.reporter().merge(ctx, w, opts)
}

// appliesPlanFile reports whether an apply stage runs terraform apply on
// the stored plan: the default stage (nil) and any with an apply step.
func appliesPlanFile(steps []atoll.Step) bool {
	return steps == nil || slices.ContainsFunc(steps, func(s atoll.Step) bool { return s.Name == "apply" })
}

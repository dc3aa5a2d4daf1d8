package runner

import (
	"context"
	"encoding/json"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/drift"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner/notify"
	"github.com/atollhq/atoll/vcs"
)

// Drift checks (atoll.RequestDrift): a plan of every project (or those
// named) at the head of a branch, on the repository's drift target, whose
// results are recorded as each project's drift state. They post nothing
// to the host (silent), take no lock, and are never applied by
// themselves.

// CheckDrift queues a drift check and wakes the scheduler. EFORBIDDEN for
// a repository not on the allowlist, EINVALID for a bad branch or project
// name.
func (r *Runner) CheckDrift(ctx context.Context, c atoll.DriftCheck) (*atoll.Request, error) {
	if !r.Allowlist.Allows(c.Repo.Host, c.Repo.Owner, c.Repo.Name) {
		return nil, atoll.Errorf(atoll.EFORBIDDEN, "Repository %s/%s is not in --repo-allowlist.", c.Repo.Host, c.Repo.FullName())
	}
	if c.Branch == "" || strings.HasPrefix(c.Branch, "-") || strings.ContainsAny(c.Branch, " :\\~^?*[") || strings.Contains(c.Branch, "..") {
		return nil, atoll.Errorf(atoll.EINVALID, "%q is not a branch name.", c.Branch)
	}
	for _, p := range c.Projects {
		if strings.TrimSpace(p) == "" {
			return nil, atoll.Errorf(atoll.EINVALID, "Project names cannot be empty.")
		}
	}
	req, err := r.DB.QueueDrift(ctx, c)
	if err != nil {
		return nil, err
	}
	r.sched.Wake()
	return req, nil
}

// silent is a drift target's provider: it reads (clone URLs, credentials)
// through the host's, and tells the host nothing, for a drift target is
// no pull request.
type silent struct{ vcs.Provider }

func (s silent) Unwrap() vcs.Provider                                          { return s.Provider }
func (silent) PullRefs(int) []string                                           { return nil }
func (silent) SetStatus(context.Context, atoll.Repo, string, vcs.Status) error { return nil }
func (silent) CreateComment(context.Context, atoll.Repo, int, string) (string, error) {
	return "", nil
}
func (silent) UpdateComment(context.Context, atoll.Repo, int, string, string) error { return nil }
func (silent) HideComments(context.Context, atoll.Repo, int, string, ...string) error {
	return nil
}
func (silent) Merge(context.Context, atoll.Repo, int, vcs.MergeOptions) error {
	return atoll.Errorf(atoll.EINVALID, "A drift target is not merged.")
}
func (silent) GetPull(context.Context, atoll.Repo, int) (*vcs.PullDetails, error) {
	return nil, atoll.Errorf(atoll.EINVALID, "A drift target is no pull request.")
}
func (silent) ChangedFiles(context.Context, atoll.Repo, int) ([]string, error) {
	return nil, atoll.Errorf(atoll.EINVALID, "A drift target is no pull request.")
}

// CloneAuthorization passes through to a host that authorizes clones
// itself (vcs.As asks the provider underneath first).
func (s silent) CloneAuthorization(ctx context.Context, repo atoll.Repo) (string, string, error) {
	ca, _ := vcs.As[vcs.CloneAuthorizer](s.Provider)
	return ca.CloneAuthorization(ctx, repo)
}

// driftRun is a drift request: its checks run as a plan of the branch.
func (r *Runner) driftRun(ctx context.Context, w *work) error {
	sel, err := driftSelection(w.req)
	if err != nil {
		return err
	}
	if sel.Apply {
		apply := &command.Command{Name: command.Apply}
		return r.withHooks(ctx, w, "apply", apply, func() error { return r.driftApply(ctx, w, sel) })
	}
	plan := &command.Command{Name: command.Plan}
	return r.withHooks(ctx, w, "plan", plan, func() error {
		jobs, err := r.DB.RequestJobs(ctx, w.req.ID)
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			// A request that stopped before making its jobs resolves again.
			if jobs, err = r.resolveDrift(ctx, w); err != nil {
				return err
			}
		}
		if err := r.recordDrift(ctx, w, r.runPlans(ctx, w, jobs)); err != nil {
			return err
		}
		if sel.Reconcile && r.autoRemediation(w) {
			// Nothing to approve: the reconcile applies at once.
			return r.driftApply(ctx, w, sel)
		}
		return nil
	})
}

// autoRemediation reports whether the server-side config's drift_detection
// makes the repository's reconciles automatic (remediation: auto).
func (r *Runner) autoRemediation(w *work) bool {
	if r.ServerConfig == nil {
		return false
	}
	s, ok := r.ServerConfig.DriftFor(serverRepoID(w.repo), w.pull.HeadRef)
	return ok && s.Remediation == repocfg.RemediationAuto
}

// driftApply applies the pending reconcile plans of the projects sel names
// (all of them for an automatic reconcile), under their locks: a project a
// pull request holds is not applied. The locks go back when it ends.
func (r *Runner) driftApply(ctx context.Context, w *work, sel atoll.DriftSelection) error {
	jobs, err := r.DB.RequestJobs(ctx, w.req.ID)
	if err != nil {
		return err
	}
	var applies []*atoll.Job
	for _, j := range jobs {
		if j.Kind == atoll.JobApply {
			applies = append(applies, j)
		}
	}
	if len(applies) == 0 {
		plans, err := r.DB.PendingPlans(ctx, w.pull.ID)
		if err != nil {
			return err
		}
		auto := r.autoRemediation(w)
		for _, p := range plans {
			pj, err := r.DB.Job(ctx, p.JobID)
			if err != nil {
				return err
			}
			named := len(sel.Projects) > 0 || len(sel.Paths) > 0
			if named && !driftSelects(sel, repocfg.Project{Name: pj.Project, Dir: pj.Dir, Workspace: pj.Workspace}) {
				continue
			}
			if p.ChangesNothing() {
				continue // in sync: nothing to reconcile
			}
			spec := pj.Spec
			spec.PlanID, spec.Autoplan, spec.LockTaken, spec.AutoRemediation = p.ID, false, false, auto
			applies = append(applies, &atoll.Job{Kind: atoll.JobApply, RequestID: w.req.ID, PullID: w.pull.ID, ProjectID: pj.ProjectID,
				HeadSHA: p.HeadSHA, User: w.req.User, Repo: pj.Repo, Pull: pj.Pull, Project: pj.Project, Dir: pj.Dir, Workspace: pj.Workspace, Spec: spec})
		}
		if len(applies) == 0 {
			return atoll.Errorf(atoll.EINVALID, "No reconcile plan with changes to apply: reconcile the project first.")
		}
		if err := r.DB.InsertJobs(ctx, applies); err != nil {
			return err
		}
	}
	r.runLocked(ctx, w, applies, r.runApply)
	_, err = r.DB.ReleaseLocksWhere(context.WithoutCancel(ctx), atoll.LockSelector{PullID: w.pull.ID, KeepPlans: true}, w.req.User, w.req.Source, "locks.release", "reconcile ended")
	return err
}

// reconcileApply applies a reconcile's plan: its approval (always, unless
// automatic) and policies are checked as for any apply; the pull request's
// requirements do not apply (there is none), and the plan must still be
// of the branch's head.
func (r *Runner) reconcileApply(ctx context.Context, w *work, j *atoll.Job, sink *logSink, res *atoll.ProjectResult) error {
	remote, err := cloneRemote(ctx, w)
	if err != nil {
		return err
	}
	head, err := r.Workdirs.ResolveBranch(ctx, git.Spec{Key: workdirKey(w.repo), Remote: remote}, w.pull.HeadRef)
	if err != nil {
		return atoll.Errorf(atoll.EINVALID, "%s", redactPaths(err.Error(), r.Workdirs.Root))
	}
	if head != j.HeadSHA {
		return atoll.Errorf(atoll.ECONFLICT, "This reconcile plan was made for commit %s but %s is now at %s: reconcile again.", short(j.HeadSHA), w.pull.HeadRef, short(head))
	}
	approval, err := r.approvalBeforeApply(ctx, j)
	if err != nil {
		return r.approvalLink(res, j, err)
	}
	res.ApprovedBy = approvedBy(approval)
	if err := r.policiesBeforeApply(ctx, w, j); err != nil {
		return err
	}
	return r.applyChecked(ctx, w, j, sink, res)
}

// resolveDrift resolves the branch's head, checks it out, selects the
// projects and queues their plan jobs.
func (r *Runner) resolveDrift(ctx context.Context, w *work) ([]*atoll.Job, error) {
	remote, err := cloneRemote(ctx, w)
	if err != nil {
		return nil, err
	}
	sha, err := r.Workdirs.ResolveBranch(ctx, git.Spec{Key: workdirKey(w.repo), Remote: remote}, w.pull.HeadRef)
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "%s", redactPaths(err.Error(), r.Workdirs.Root))
	}
	err = r.commit("drift head", func(ctx context.Context) error {
		return r.DB.UpdatePull(ctx, w.repo.ID, atoll.Pull{Number: w.pull.Number, HeadSHA: sha, BaseSHA: sha})
	})
	if err != nil {
		return nil, err
	}
	w.pull.HeadSHA, w.pull.BaseSHA = sha, sha
	root, err := r.checkout(ctx, w, atoll.DefaultWorkspace, sha)
	if err != nil {
		return nil, err
	}
	cfg, err := r.loadConfig(w, root)
	if err != nil {
		return nil, err
	}
	files, err := git.Files(ctx, root)
	if err != nil {
		return nil, err
	}
	// Every project the tree has, as if each file had changed.
	projects, err := repocfg.Modified(cfg, root, files)
	if err != nil {
		return nil, err
	}
	sel, err := driftSelection(w.req)
	if err != nil {
		return nil, err
	}
	if len(sel.Projects) > 0 || len(sel.Paths) > 0 {
		// A project named that the branch does not have is an error:
		// nothing is checked, rather than a check of fewer projects.
		for _, name := range sel.Projects {
			if !slices.ContainsFunc(projects, func(p repocfg.Project) bool { return p.Name == name || p.Dir == name }) {
				return nil, atoll.Errorf(atoll.EINVALID, "No project %q at the head of %s.", name, w.pull.HeadRef)
			}
		}
		projects = slices.DeleteFunc(projects, func(p repocfg.Project) bool { return !driftSelects(sel, p) })
	}
	if len(sel.Globs) > 0 {
		projects = slices.DeleteFunc(projects, func(p repocfg.Project) bool {
			return !slices.ContainsFunc(sel.Globs, func(g string) bool { return projectGlob(g, p.Name) || projectGlob(g, p.Dir) })
		})
	}
	jobs, err := r.planJobs(w, cfg, projects, &command.Command{Name: command.Plan}, atoll.JobPlan, false)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		j.Spec.Drift = true
	}
	return jobs, r.DB.QueueProjectJobs(ctx, w.repo.ID, jobs)
}

// driftSelection is drift request req's selection.
func driftSelection(req *atoll.Request) (atoll.DriftSelection, error) {
	var sel atoll.DriftSelection
	if req.Comment != "" {
		if err := json.Unmarshal([]byte(req.Comment), &sel); err != nil {
			return sel, atoll.Errorf(atoll.EINTERNAL, "drift request %d: %v", req.ID, err)
		}
	}
	return sel, nil
}

// driftSelects reports whether p is named: by name or dir among Projects,
// or by dir and workspace (default: the default workspace) among Paths.
func driftSelects(s atoll.DriftSelection, p repocfg.Project) bool {
	if slices.Contains(s.Projects, p.Name) || slices.Contains(s.Projects, p.Dir) {
		return true
	}
	for _, sp := range s.Paths {
		ws := sp.Workspace
		if ws == "" {
			ws = atoll.DefaultWorkspace
		}
		if path.Clean(sp.Dir) == path.Clean(p.Dir) && ws == p.Workspace {
			return true
		}
	}
	return false
}

// changedOutside is Terraform's note of objects changed outside of it.
const changedOutside = "Objects have changed outside of Terraform"

// recordDrift records each finished job's result as its project's drift.
func (r *Runner) recordDrift(ctx context.Context, w *work, outcomes []outcome) error {
	if sel, err := driftSelection(w.req); err != nil {
		return err
	} else if sel.PlanOnly {
		return nil // a plan-only remediation: its jobs are its outcome
	}
	var results []atoll.DriftResult
	var projects []drift.ProjectDrift
	final := true
	for _, o := range outcomes {
		res, ok := driftResult(o)
		if !ok {
			final = false
			continue
		}
		results = append(results, res)
		projects = append(projects, driftProject(w, o.job, res, o.res.Output))
	}
	var notes []atoll.Notification
	if final {
		var err error
		if notes, err = r.driftNotifications(w, projects); err != nil {
			return err
		}
	}
	err := r.commit("record drift", func(ctx context.Context) error { return r.DB.RecordDrift(ctx, w.req.ID, results, notes) })
	if err == nil && len(notes) > 0 {
		r.wakeNotifications()
	}
	return err
}

// driftProject is a project's check as Atlantis's drift API and webhooks
// show it.
func driftProject(w *work, j *atoll.Job, res atoll.DriftResult, output string) drift.ProjectDrift {
	p := drift.ProjectDrift{ProjectName: j.Project, Directory: j.Dir, Workspace: j.Workspace, Ref: w.pull.HeadRef,
		BaseBranch: w.pull.HeadRef, ResolvedCommit: w.pull.HeadSHA, DetectionID: itoa(w.req.ID), LastChecked: time.Now(), Error: res.Error}
	if res.State != atoll.DriftFailed {
		p.SetDetails(drift.FromPlan(res.Add, res.Change, res.Destroy, res.Import, res.Forget, res.ChangedOutside, drift.SummaryLine(output)))
	}
	return p
}

// driftNotifications are a check's drift webhooks: sent, as Atlantis's,
// only when no project failed (a check that found no project too).
func (r *Runner) driftNotifications(w *work, projects []drift.ProjectDrift) ([]atoll.Notification, error) {
	if r.Notifications == nil || r.Notifications.Sender == nil || !drift.ShouldSendWebhook(projects) {
		return nil, nil
	}
	var notes []atoll.Notification
	var payload []byte
	for i, wh := range r.Notifications.Sender.Webhooks {
		if wh.Event != notify.EventDrift {
			continue
		}
		if payload == nil {
			var err error
			if payload, err = json.Marshal(drift.NewWebhookPayload(w.repo.FullName(), w.pull.HeadRef, itoa(w.req.ID), projects)); err != nil {
				return nil, err
			}
		}
		notes = append(notes, atoll.Notification{Dest: i, Kind: wh.Kind, Payload: payload})
	}
	return notes, nil
}

// driftResult is a drift job's result: failed with its error, drifted
// when its plan changes anything or Terraform noted objects changed
// outside of it, else in sync; false while the job has not ended.
func driftResult(o outcome) (atoll.DriftResult, bool) {
	if !o.final {
		return atoll.DriftResult{}, false // stopping: the resumed request records it
	}
	res := atoll.DriftResult{JobID: o.job.ID, ProjectID: o.job.ProjectID, State: atoll.DriftInSync}
	if s := o.res.Summary; s != nil {
		res.Add, res.Change, res.Destroy, res.Import = s.Add, s.Change, s.Destroy, s.Import
	}
	res.ChangedOutside = strings.Contains(o.res.Output, changedOutside)
	switch {
	case o.res.Error != "":
		res.State, res.Error = atoll.DriftFailed, o.res.Error
	case res.Add+res.Change+res.Destroy+res.Import+res.Forget > 0 || res.ChangedOutside:
		res.State = atoll.DriftDrifted
	}
	return res, true
}

// DriftOutcome waits for drift request id to end and returns its
// projects' results, read back from its jobs (the same rule recordDrift
// applies).
func (r *Runner) DriftOutcome(ctx context.Context, id int64) (*atoll.DriftOutcome, error) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := r.DB.Request(ctx, id)
		if err != nil {
			return nil, err
		}
		if req.Kind != atoll.RequestDrift {
			return nil, atoll.Errorf(atoll.ENOTFOUND, "Request %d is not a drift check.", id)
		}
		if req.State == atoll.RequestDone || req.State == atoll.RequestInterrupted {
			return r.driftOutcome(ctx, req)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

func (r *Runner) driftOutcome(ctx context.Context, req *atoll.Request) (*atoll.DriftOutcome, error) {
	pull, err := r.DB.Pull(ctx, req.PullID)
	if err != nil {
		return nil, err
	}
	jobs, err := r.DB.RequestJobs(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	out := &atoll.DriftOutcome{Request: req, Branch: pull.HeadRef, HeadSHA: pull.HeadSHA}
	for _, j := range jobs {
		o := outcome{job: j, final: j.Final()}
		o.res.Error, o.res.Summary = j.Error, j.Summary
		if j.Final() && j.State != atoll.JobSucceeded && j.Error == "" {
			o.res.Error = "The check's plan " + j.State + "."
		}
		text, err := r.jobOutput(ctx, j.ID)
		if err != nil {
			return nil, err
		}
		o.res.Output = text
		res, ok := driftResult(o)
		if !ok {
			continue
		}
		out.Projects = append(out.Projects, atoll.DriftProjectOutcome{Job: j, Result: res, Output: text})
	}
	return out, nil
}

// jobOutput is a job's stored log (Terraform's output and Atoll's lines).
func (r *Runner) jobOutput(ctx context.Context, jobID int64) (string, error) {
	var b strings.Builder
	var from int64
	for {
		lines, err := r.DB.Logs(ctx, jobID, from, 5000)
		if err != nil {
			return "", err
		}
		for _, l := range lines {
			b.WriteString(l.Text)
			b.WriteByte('\n')
			from = l.Seq + 1
		}
		if len(lines) < 5000 {
			return b.String(), nil
		}
	}
}

// projectGlob is path.Match, false for a bad pattern (the config refuses
// those at start) or an empty name.
func projectGlob(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return name != "" && err == nil && ok
}

package web

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/drift"
)

// handleDriftRemediate is POST /api/drift/remediate. Action plan (the
// default) plans the targets at the branch's head, as a detection does,
// without recording drift states; the plans stay pending on the drift
// target, where they are approved. Action apply (with
// --enable-drift-remediation) applies the targets' pending plans, each
// under its approval (always needed, unless the server-side config's
// drift_detection sets remediation auto) and its project's lock. Runs are
// kept for the history routes.
func (s *Server) handleDriftRemediate(w http.ResponseWriter, r *http.Request) {
	var in drift.RemediateRequest
	if !s.readDriftRequest(w, r, drift.MsgRemediationDisabled, &in) {
		return
	}
	if in.Action == drift.ActionApply && !s.DriftRemediation {
		s.driftFail(w, r, &drift.EnvelopeError{Code: drift.CodeServiceUnavailable, Message: drift.MsgRemediationApplyDisabled})
		return
	}
	paths := remediationPaths(in)
	check, e := s.driftCheck(r, in.Repository, in.Type, in.Ref, in.BaseBranch, in.Projects, paths)
	if e != nil {
		s.driftFail(w, r, e)
		return
	}
	if in.Action == drift.ActionApply {
		s.driftRemediateApply(w, r, in, check)
		return
	}
	check.PlanOnly = true
	res := drift.RemediationResult{ID: newUUID(), Repository: in.Repository, Ref: check.Branch, Action: drift.ActionPlan,
		Status: drift.RunRunning, StartedAt: s.now()}
	run := true
	if in.DriftOnly {
		// Only the projects whose last check found drift.
		var err error
		if check, run, err = s.driftedTargets(r, check, in); err != nil {
			s.driftError(w, r, err)
			return
		}
	}
	if run {
		// The drift each project's last check found, before this plan.
		before, err := s.DB.DriftProjects(r.Context(), atoll.DriftFilter{Repo: check.Repo.FullName(), Branch: check.Branch, State: atoll.DriftDrifted})
		if err != nil {
			s.driftError(w, r, err)
			return
		}
		out, err := s.runDrift(w, r, check)
		if err != nil {
			if atoll.ErrorCode(err) != atoll.EINTERNAL && atoll.ErrorCode(err) != "" {
				s.driftError(w, r, err)
				return
			}
			s.Logger.Error("drift remediation", "id", res.ID, "err", err)
			res.Error = "the plan could not run: see the server's log"
		} else {
			for _, p := range out.Projects {
				if len(in.Workspaces) > 0 && !slices.Contains(in.Workspaces, p.Job.Workspace) {
					continue
				}
				pr := projectRemediation(out, p)
				for _, d := range before {
					if d.Dir == p.Job.Dir && d.Workspace == p.Job.Workspace {
						pr.DriftBefore = projectDrift(d).Drift
					}
				}
				res.Projects = append(res.Projects, pr)
			}
		}
	}
	s.finishRemediation(w, r, check, res)
}

// driftRemediateApply applies the pending plans of the targets (see
// handleDriftRemediate): each project's apply job is its result; a target
// without a pending plan with changes fails the run.
func (s *Server) driftRemediateApply(w http.ResponseWriter, r *http.Request, in drift.RemediateRequest, check atoll.DriftCheck) {
	check.Apply = true
	res := drift.RemediationResult{ID: newUUID(), Repository: in.Repository, Ref: check.Branch, Action: drift.ActionApply,
		Status: drift.RunRunning, StartedAt: s.now()}
	if len(check.Projects) == 0 && len(check.Paths) == 0 {
		// Apply names its projects: every drifted one when none is named.
		var err error
		var run bool
		if check, run, err = s.driftedTargets(r, check, in); err != nil {
			s.driftError(w, r, err)
			return
		}
		if !run {
			res.Error = "no drifted project to apply: run drift detection, then plan the remediation"
			s.finishRemediation(w, r, check, res)
			return
		}
	}
	out, err := s.runDrift(w, r, check)
	switch {
	case err != nil && atoll.ErrorCode(err) != atoll.EINTERNAL && atoll.ErrorCode(err) != "":
		s.driftError(w, r, err)
		return
	case err != nil:
		s.Logger.Error("drift remediation", "id", res.ID, "err", err)
		res.Error = "the apply could not run: see the server's log"
	case len(out.Projects) == 0:
		res.Error = out.Request.Error
		if res.Error == "" {
			res.Error = "no pending remediation plan with changes to apply: plan the remediation first"
		}
	}
	if out != nil {
		for _, p := range out.Projects {
			pr := drift.ProjectRemediation{ProjectName: p.Job.Project, Directory: p.Job.Dir, Workspace: p.Job.Workspace,
				Status: drift.RunSuccess, ApplyOutput: p.Output}
			if p.Job.State != atoll.JobSucceeded {
				pr.Status, pr.Error = drift.RunFailed, p.Job.Error
			} else {
				pr.DriftAfter = &drift.Details{Summary: drift.ApplySucceeded}
			}
			res.Projects = append(res.Projects, pr)
		}
	}
	s.finishRemediation(w, r, check, res)
}

// finishRemediation completes run res, stores it and answers it.
func (s *Server) finishRemediation(w http.ResponseWriter, r *http.Request, check atoll.DriftCheck, res drift.RemediationResult) {
	res.Complete(s.now())
	if err := s.storeRemediation(r, check.Repo, res); err != nil {
		s.driftError(w, r, err)
		return
	}
	switch status, code := drift.RemediationStatusCode(res); code {
	case "":
		s.driftOK(w, r, status, res)
	case drift.CodeConflict:
		s.driftFail(w, r, &drift.EnvelopeError{Code: code, Message: drift.MsgRemediationFailed, Details: res})
	default:
		s.driftFail(w, r, &drift.EnvelopeError{Code: code, Message: drift.MsgInternal})
	}
}

// remediationPaths are the request's paths, each without a workspace
// given once per top-level workspace (none: the default one).
func remediationPaths(in drift.RemediateRequest) []drift.PathSelector {
	var out []drift.PathSelector
	for _, p := range in.Paths {
		if p.Workspace != "" || len(in.Workspaces) == 0 {
			out = append(out, p)
			continue
		}
		for _, ws := range in.Workspaces {
			out = append(out, drift.PathSelector{Directory: p.Directory, Workspace: ws})
		}
	}
	return out
}

// driftedTargets narrows check to the projects whose last check of the
// branch found drift and that the request's selectors name; false when
// there are none (nothing runs).
func (s *Server) driftedTargets(r *http.Request, check atoll.DriftCheck, in drift.RemediateRequest) (atoll.DriftCheck, bool, error) {
	stored, err := s.DB.DriftProjects(r.Context(), atoll.DriftFilter{Repo: check.Repo.FullName(), Branch: check.Branch, State: atoll.DriftDrifted})
	if err != nil {
		return check, false, err
	}
	named := len(check.Projects) > 0 || len(check.Paths) > 0
	var paths []atoll.DriftPath
	for _, d := range stored {
		if named && !slices.Contains(check.Projects, d.Project) && !slices.ContainsFunc(check.Paths, func(p atoll.DriftPath) bool {
			return p.Dir == d.Dir && (p.Workspace == d.Workspace || p.Workspace == "" && d.Workspace == atoll.DefaultWorkspace)
		}) {
			continue
		}
		if len(in.Workspaces) > 0 && !slices.Contains(in.Workspaces, d.Workspace) {
			continue
		}
		paths = append(paths, atoll.DriftPath{Dir: d.Dir, Workspace: d.Workspace})
	}
	check.Projects, check.Paths = nil, paths
	return check, len(paths) > 0, nil
}

// projectRemediation is one project of a plan-only run.
func projectRemediation(out *atoll.DriftOutcome, p atoll.DriftProjectOutcome) drift.ProjectRemediation {
	pd := outcomeDrift(out, p)
	pr := drift.ProjectRemediation{ProjectName: pd.ProjectName, Directory: pd.Directory, Workspace: pd.Workspace,
		Status: drift.RunSuccess, PlanOutput: p.Output}
	if pd.Error != "" {
		pr.Status, pr.Error = drift.RunFailed, pd.Error
	} else {
		pr.DriftAfter = pd.Drift
	}
	return pr
}

// storeRemediation keeps run res for the history routes.
func (s *Server) storeRemediation(r *http.Request, repo atoll.Repo, res drift.RemediationResult) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	rec := atoll.DriftRemediation{ID: res.ID, Repo: driftKey(&repo), Ref: res.Ref, Action: res.Action, Status: res.Status,
		StartedAt: res.StartedAt, Result: b}
	if res.CompletedAt != nil {
		rec.CompletedAt = *res.CompletedAt
	}
	return s.DB.AddDriftRemediation(r.Context(), rec)
}

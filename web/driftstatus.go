package web

import (
	"net/http"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/drift"
)

// handleDriftStatus is GET /api/drift/status: each project's last drift
// check of the repository, filtered by project, path, workspace, ref and
// base_branch (Atoll checks branches: ref and base_branch are the same).
func (s *Server) handleDriftStatus(w http.ResponseWriter, r *http.Request) {
	repo, e := s.driftReadScope(r, drift.MsgDetectionDisabled)
	if e != nil {
		s.driftFail(w, r, e)
		return
	}
	q := r.URL.Query()
	dir, e := drift.CheckPathFilter(q.Get("path"))
	if e != nil {
		s.driftFail(w, r, e)
		return
	}
	stored, err := s.DB.DriftProjects(r.Context(), atoll.DriftFilter{Repo: repo.FullName()})
	if err != nil {
		s.driftError(w, r, err)
		return
	}
	project, ws := q.Get("project"), q.Get("workspace")
	ref, base := drift.NormalizeRef(q.Get("ref")), drift.NormalizeRef(q.Get("base_branch"))
	var projects []drift.ProjectDrift
	for _, d := range stored {
		switch {
		case project != "" && d.Project != project,
			dir != "" && d.Dir != dir,
			ws != "" && d.Workspace != ws,
			ref != "" && d.Branch != ref,
			base != "" && d.Branch != base:
			continue
		}
		projects = append(projects, projectDrift(d))
	}
	s.driftOK(w, r, http.StatusOK, drift.NewStatusResponse(q.Get("repository"), projects))
}

// projectDrift is a stored drift state as the API shows it. A stored
// state keeps the plan's counts, not its summary line.
func projectDrift(d *atoll.DriftProject) drift.ProjectDrift {
	p := drift.ProjectDrift{ProjectName: d.Project, Directory: d.Dir, Workspace: d.Workspace, Ref: d.Branch,
		BaseBranch: d.Branch, ResolvedCommit: d.HeadSHA, LastChecked: d.CheckedAt, Error: d.Error}
	if d.RequestID != 0 {
		p.DetectionID = strconv.FormatInt(d.RequestID, 10)
	}
	if d.State != atoll.DriftFailed {
		p.SetDetails(drift.FromPlan(d.Add, d.Change, d.Destroy, d.Import, d.Forget, d.ChangedOutside, ""))
	}
	return p
}

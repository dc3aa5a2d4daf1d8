package web

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// driftPageRoutes registers the drift page and its "Check now" action.
func (s *Server) driftPageRoutes(mux *routeMux) {
	mux.HandleFunc("GET /drift", s.handleDriftPage)
	mux.HandleFunc("POST /drift/check", s.require(atoll.RoleOperator, s.handleDriftCheck))
	mux.HandleFunc("POST /drift/reconcile", s.require(atoll.RoleOperator, s.handleDriftReconcile))
	mux.HandleFunc("POST /drift/apply", s.require(atoll.RoleOperator, s.handleDriftApply))
}

// driftHistoryLimit is how many of a project's checks its history shows.
const driftHistoryLimit = 50

// handleDriftPage shows every project's drift state (any signed-in user),
// filtered by ?repo=owner/name and ?state=in_sync|drifted|failed; with
// ?section=drift the content alone, for live.js to swap in place when a
// drift state was recorded. With ?project=ID&branch=B, the history of
// that project's checks at B above the table (a bad id: 400). Operators
// get "Check now" buttons when the server runs drift checks, and on a
// drifted project "Reconcile", then "Apply" once its pending plan is
// approved.
func (s *Server) handleDriftPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	d := templates.DriftPage{Meta: s.pageMeta(ctx), Repo: q.Get("repo"), State: q.Get("state")}
	if d.State != "" && !slices.Contains(templates.DriftStates, d.State) {
		s.pageError(w, r, atoll.Errorf(atoll.EINVALID, "No drift state %q: in_sync, drifted or failed.", d.State))
		return
	}
	// Every state of the repository: the page counts them all, and shows
	// those of d.State.
	projects, err := s.DB.DriftProjects(ctx, atoll.DriftFilter{Repo: d.Repo})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	d.Projects = projects
	d.CanCheck = s.Drift != nil && d.Meta.User != nil && d.Meta.User.Role.Allows(atoll.RoleOperator)
	if q.Has("project") || q.Has("branch") {
		if d.History, err = s.driftHistory(ctx, projects, q.Get("project"), q.Get("branch")); err != nil {
			s.pageError(w, r, err)
			return
		}
	}
	if d.Approved, err = s.approvedReconciles(ctx, projects); err != nil {
		s.pageError(w, r, err)
		return
	}
	switch section := q.Get("section"); section {
	case "":
		s.renderPage(w, r, http.StatusOK, templates.Drift(d))
	case templates.SectionDrift:
		s.renderPage(w, r, http.StatusOK, templates.DriftSection(d))
	default:
		s.pageError(w, r, atoll.Errorf(atoll.EINVALID, "No section %q on this page.", section))
	}
}

// driftCheckResult is POST /drift/check's JSON answer.
type driftCheckResult struct {
	Message string         `json:"message"`
	Request *atoll.Request `json:"request"`
}

// handleDriftCheck queues a drift check (operators): a form with repo
// (owner/name), branch and, optionally, project (a name or dir; without
// it every project). It answers back on the drift page (a notice), or
// JSON. Without drift checks on this server: 404.
func (s *Server) handleDriftCheck(w http.ResponseWriter, r *http.Request) {
	c, back, ok := s.driftForm(w, r, false, "A drift check needs a repository (repo=owner/name) and a branch.")
	if !ok {
		return
	}
	what := c.Repo.FullName() + " " + c.Branch
	if len(c.Projects) > 0 {
		what = c.Projects[0] + " of " + what
	}
	s.queueDrift(w, r, back, c, "Drift check of "+what+" queued.")
}

// driftForm reads a drift action's form (repo, branch, project, back) into
// a check as the signed-in user; false once it answered a refusal: no
// drift checks on this server (404), a missing field (missing says which:
// project is required with needProject), an unknown repository.
func (s *Server) driftForm(w http.ResponseWriter, r *http.Request, needProject bool, missing string) (atoll.DriftCheck, string, bool) {
	ctx := r.Context()
	if err := readForm(w, r, maxForm); err != nil {
		s.failed(w, r, "/drift", err)
		return atoll.DriftCheck{}, "", false
	}
	back := "/drift"
	if b := r.PostFormValue("back"); b != "" {
		back = safeBack(b)
	}
	if s.Drift == nil {
		s.failed(w, r, back, atoll.Errorf(atoll.ENOTFOUND, "This server runs no drift checks."))
		return atoll.DriftCheck{}, back, false
	}
	name, branch, project := r.PostFormValue("repo"), r.PostFormValue("branch"), r.PostFormValue("project")
	if name == "" || branch == "" || needProject && project == "" {
		s.failed(w, r, back, atoll.Errorf(atoll.EINVALID, "%s", missing))
		return atoll.DriftCheck{}, back, false
	}
	repo, err := s.DB.RepoByName(ctx, name)
	if err != nil {
		s.failed(w, r, back, err)
		return atoll.DriftCheck{}, back, false
	}
	c := atoll.DriftCheck{Repo: *repo, Branch: branch, User: atoll.UserFromContext(ctx).Name, Source: source(r)}
	if project != "" {
		c.Projects = []string{project}
	}
	return c, back, true
}

// queueDrift queues c and answers msg back on the page (or as JSON).
func (s *Server) queueDrift(w http.ResponseWriter, r *http.Request, back string, c atoll.DriftCheck, msg string) {
	req, err := s.Drift.CheckDrift(r.Context(), c)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	s.done(w, r, back, msg, nil, driftCheckResult{Message: msg, Request: req})
}

// driftHistory is the history of project id (a decimal project id) at
// branch; its name comes from projects, the page's drift states. An
// unknown project has an empty history.
func (s *Server) driftHistory(ctx context.Context, projects []*atoll.DriftProject, id, branch string) (*templates.DriftHistory, error) {
	projectID, err := strconv.ParseInt(id, 10, 64)
	if err != nil || projectID <= 0 {
		return nil, atoll.Errorf(atoll.EINVALID, "No project %q: a history needs a project id (project=ID) and a branch.", id)
	}
	if branch == "" {
		return nil, atoll.Errorf(atoll.EINVALID, "A project's history needs a branch (branch=B).")
	}
	h := &templates.DriftHistory{ProjectID: projectID, Branch: branch, Name: "project " + id}
	for _, p := range projects {
		if p.ProjectID == projectID {
			h.Name = templates.DriftProjectName(p)
			break
		}
	}
	if h.Checks, err = s.DB.DriftHistory(ctx, projectID, branch, driftHistoryLimit); err != nil {
		return nil, err
	}
	return h, nil
}

// approvedReconciles are the pending reconcile plans of the drifted
// projects whose newest decision approves them (now): those can be
// applied.
func (s *Server) approvedReconciles(ctx context.Context, projects []*atoll.DriftProject) (map[int64]bool, error) {
	var out map[int64]bool
	now := s.now()
	for _, p := range projects {
		if p.State != atoll.DriftDrifted || p.PendingPlanID == 0 {
			continue
		}
		a, err := s.DB.PlanDecision(ctx, p.PendingPlanID)
		if err != nil {
			return nil, err
		}
		if a.Approves(p.PendingPlanSHA256, now) {
			if out == nil {
				out = map[int64]bool{}
			}
			out[p.PendingPlanID] = true
		}
	}
	return out, nil
}

package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/ansi"
	"github.com/atollhq/atoll/planview"
	"github.com/atollhq/atoll/templates"
)

// The plan page reads its job's log planLogPage lines at a time, and shows
// at most planLogMax (the job page has the rest).
const (
	planLogPage = 1000
	planLogMax  = 20000
)

// handlePlanPage shows one plan: what it changes, resource by resource and
// attribute by attribute, its outputs and the plan's own text, with every
// sensitive value redacted.
func (s *Server) handlePlanPage(w http.ResponseWriter, r *http.Request) {
	page, err := s.planPage(r.Context(), r.PathValue("id"), true)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	v, err := s.approvalView(r.Context(), page.Plan.ID, paths.Plan(page.Plan.ID))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	page.Approval = &v
	page.Meta = s.pageMeta(r.Context())
	s.renderPage(w, r, http.StatusOK, templates.PlanView(*page))
}

// planAPI is the JSON of GET /api/v1/plans/{id}.
type planAPI struct {
	Plan    *atoll.Plan    `json:"plan"`
	Repo    string         `json:"repo"`
	Pull    int            `json:"pull"`
	Project atoll.Project  `json:"project"`
	State   string         `json:"state"`
	Reason  string         `json:"reason"`
	Changes *planview.Plan `json:"changes"`
	// Error says why Changes is null.
	Error string `json:"error,omitempty"`
	// Policies are the plan's conftest results (--enable-policy-checks).
	Policies []atoll.PolicyCheck `json:"policies,omitempty"`
}

// handleAPIPlanView is the plan page as JSON, redacted the same way.
func (s *Server) handleAPIPlanView(w http.ResponseWriter, r *http.Request) {
	page, err := s.planPage(r.Context(), r.PathValue("id"), false)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, planAPI{Plan: page.Plan, Repo: page.Pull.Repo, Pull: page.Pull.Number, Project: page.Project,
		State: page.State, Reason: page.Reason, Changes: page.View, Error: page.ViewError, Policies: page.Policies})
}

// planPage loads plan id with its pull request, job, state and parsed
// changes, and, withLog, the job's log.
func (s *Server) planPage(ctx context.Context, idText string, withLog bool) (*templates.PlanPage, error) {
	id, err := atoll.ParseID(idText)
	if err != nil {
		return nil, err
	}
	plan, err := s.DB.Plan(ctx, id)
	if err != nil {
		return nil, err
	}
	page := &templates.PlanPage{Plan: plan}
	if page.Pull, err = s.DB.Pull(ctx, plan.PullID); err != nil {
		return nil, err
	}
	if page.Job, err = s.DB.Job(ctx, plan.JobID); err != nil {
		return nil, err
	}
	page.Project = atoll.Project{ID: plan.ProjectID, Name: page.Job.Project, Dir: page.Job.Dir, Workspace: page.Job.Workspace}
	if page.State, page.Reason, err = s.planStateOf(ctx, page.Pull, plan); err != nil {
		return nil, err
	}
	if page.Policies, err = s.DB.PolicyChecks(ctx, plan.ID); err != nil {
		return nil, err
	}
	show := plan.ShowJSON
	plan.ShowJSON = nil // never answered as is: it holds the secrets
	switch {
	case plan.PrunedAt != nil:
		page.ViewError = fmt.Sprintf("Retention removed this plan's details on %s (--retain-plan-files).", plan.PrunedAt.UTC().Format("2006-01-02"))
	case len(show) == 0 && plan.Fileless():
		// A custom plan stage of run steps only: nothing to parse.
		page.ViewError = "This plan's workflow wrote no plan file; its steps' output is below."
	case len(show) == 0 && s.now().Sub(plan.CreatedAt) < time.Minute:
		// Its comment went out on plan's own summary; the JSON follows.
		page.ViewError = "This plan's resource view is being made (it follows the plan comment by a moment): reload to see it. Its text is below."
	case len(show) == 0:
		page.ViewError = "This plan has no resource view: the request that made it was canceled or its server stopped before it was made. Its text is below."
	default:
		if page.View, err = planview.Parse(show); err != nil {
			s.Logger.Warn("plan page: unreadable plan JSON", "plan", plan.ID, "err", err)
			page.ViewError = "Atoll cannot read this plan's JSON; its text is below."
		}
	}
	if withLog {
		if page.Log, page.LogTruncated, err = s.planLog(ctx, plan.JobID, page.View); err != nil {
			return nil, err
		}
	}
	return page, nil
}

// planStateOf is where plan stands: as on the pull request page if it is
// its project's latest plan, else replaced by a newer one.
func (s *Server) planStateOf(ctx context.Context, pull *atoll.Pull, plan *atoll.Plan) (string, string, error) {
	latest, err := s.DB.LatestPlans(ctx, pull.ID)
	if err != nil {
		return "", "", err
	}
	for _, l := range latest {
		if l.ProjectID == plan.ProjectID && l.ID != plan.ID {
			return templates.PlanDiscarded, fmt.Sprintf("Replaced by a newer plan, #%d.", l.ID), nil
		}
	}
	jobs, err := s.DB.PullJobs(ctx, pull.ID)
	if err != nil {
		return "", "", err
	}
	var lastPlan, lastApply *atoll.Job
	for _, j := range jobs {
		switch {
		case j.ProjectID != plan.ProjectID:
		case j.Kind == atoll.JobPlan && lastPlan == nil:
			lastPlan = j
		case j.Kind == atoll.JobApply && lastApply == nil:
			lastApply = j
		}
	}
	state, reason := planState(pull, plan, lastPlan, lastApply)
	return state, reason, nil
}

// planLog reads the plan job's log page by page, up to planLogMax lines,
// without terminal escapes and with the plan's known secrets hidden.
func (s *Server) planLog(ctx context.Context, jobID int64, view *planview.Plan) ([]atoll.LogLine, bool, error) {
	var out []atoll.LogLine
	from := int64(0)
	for len(out) < planLogMax {
		n := min(planLogPage, planLogMax-len(out))
		lines, err := s.DB.Logs(ctx, jobID, from, n)
		if err != nil {
			return nil, false, err
		}
		for _, l := range lines {
			l.Text = ansi.Strip(l.Text)
			if view != nil {
				l.Text = view.Scrub(l.Text)
			}
			out = append(out, l)
		}
		if len(lines) < n {
			return out, false, nil
		}
		from = lines[len(lines)-1].Seq + 1
	}
	more, err := s.DB.Logs(ctx, jobID, from, 1)
	return out, len(more) > 0, err
}

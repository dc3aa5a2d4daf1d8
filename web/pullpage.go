package web

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// rowJobs is how many of a project's latest jobs its row lists.
const rowJobs = 3

// handlePullPage shows one pull request: its projects each with its latest
// plan and why it can or cannot be applied, its lock, jobs, the commit
// statuses and the conversation. ?request=N&for=ID|all adds the outcome of
// a command sent from the page to that row (see handlePullCommand).
// ?section=NAME answers only that section's content, for live.js to swap
// in place when it changed; ?section=notice&request=N&for=ID|all only the
// command's outcome.
func (s *Server) handlePullPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	section := r.URL.Query().Get("section")
	if section != "" && section != templates.PullSectionNotice && !slices.Contains(templates.PullSections, section) {
		s.pageError(w, r, atoll.Errorf(atoll.EINVALID, "No section %q on this page.", section))
		return
	}
	pull, err := s.pullOf(ctx, r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	page := templates.PullPage{Meta: s.pageMeta(ctx), Pull: pull}
	if section == templates.PullSectionNotice {
		if err := s.addNotice(ctx, r, &page); err != nil {
			s.pageError(w, r, err)
			return
		}
		n := page.AllNotice
		for _, row := range page.Rows {
			n = row.Notice // addNotice made the one row of its project
		}
		s.renderPage(w, r, http.StatusOK, templates.CommandNotice(n))
		return
	}
	if err := s.loadPull(ctx, &page); err != nil {
		s.pageError(w, r, err)
		return
	}
	if section != "" {
		s.renderPage(w, r, http.StatusOK, templates.PullSection(section, page))
		return
	}
	if err := s.addNotice(ctx, r, &page); err != nil {
		s.pageError(w, r, err)
		return
	}
	s.renderPage(w, r, http.StatusOK, templates.Pull(page))
}

// loadPull reads everything the pull request page shows into page.
func (s *Server) loadPull(ctx context.Context, page *templates.PullPage) (err error) {
	pull := page.Pull
	if page.Repo, err = s.DB.Repo(ctx, pull.RepoID); err != nil {
		return err
	}
	if pull.HeadSHA != "" {
		if page.Statuses, err = s.DB.Statuses(ctx, page.Repo.ID, pull.HeadSHA); err != nil {
			return err
		}
	}
	var projects []atoll.Project
	var plans []*atoll.Plan
	for _, load := range []func() error{
		func() (err error) { projects, err = s.DB.PullProjects(ctx, pull.ID); return },
		func() (err error) { plans, err = s.DB.LatestPlans(ctx, pull.ID); return },
		func() (err error) { page.Jobs, err = s.DB.PullJobs(ctx, pull.ID); return },
		func() (err error) { page.Locks, err = s.DB.PullLocks(ctx, pull.ID); return },
		func() (err error) { page.Comments, err = s.DB.Comments(ctx, pull.ID); return },
		func() (err error) { page.Approvers, err = s.DB.Approvers(ctx, pull.ID); return },
	} {
		if err := load(); err != nil {
			return err
		}
	}
	page.Rows = projectRows(pull, projects, plans, page.Jobs, page.Locks)
	return s.addApprovals(ctx, pull, page.Rows)
}

// pullOf finds the pull request of the path's owner, name and number.
func (s *Server) pullOf(ctx context.Context, r *http.Request) (*atoll.Pull, error) {
	number, err := strconv.Atoi(r.PathValue("number"))
	if err != nil || number <= 0 {
		return nil, atoll.Errorf(atoll.EINVALID, "Invalid pull request number %q.", r.PathValue("number"))
	}
	return s.DB.PullByNumber(ctx, r.PathValue("owner")+"/"+r.PathValue("name"), number)
}

// projectRows pairs each project with its latest plan, lock and jobs (jobs
// newest first) and says where its plan stands.
func projectRows(pull *atoll.Pull, projects []atoll.Project, plans []*atoll.Plan, jobs []*atoll.Job, locks []*atoll.Lock) []templates.ProjectRow {
	planOf := make(map[int64]*atoll.Plan, len(plans))
	for _, p := range plans {
		planOf[p.ProjectID] = p
	}
	rows := make([]templates.ProjectRow, 0, len(projects))
	for _, p := range projects {
		row := templates.ProjectRow{Project: p, Plan: planOf[p.ID]}
		var lastPlan, lastApply *atoll.Job
		for _, j := range jobs {
			if j.ProjectID != p.ID {
				continue
			}
			if len(row.Jobs) < rowJobs {
				row.Jobs = append(row.Jobs, j)
			}
			switch {
			case j.Kind == atoll.JobPlan && lastPlan == nil:
				lastPlan = j
			case j.Kind == atoll.JobApply && lastApply == nil:
				lastApply = j
			}
		}
		for _, l := range locks {
			if l.Project == p.Name && l.Dir == p.Dir && l.Workspace == p.Workspace {
				row.Lock = l
			}
		}
		row.State, row.Reason = planState(pull, row.Plan, lastPlan, lastApply)
		rows = append(rows, row)
	}
	return rows
}

// addNotice puts the outcome of request ?request=N into the row ?for=ID
// (or the projects section for "all"). Anything that does not name a
// request of this pull request is ignored: the page is still the page.
func (s *Server) addNotice(ctx context.Context, r *http.Request, page *templates.PullPage) error {
	q := r.URL.Query()
	if q.Get("request") == "" {
		return nil
	}
	reqID, err := atoll.ParseID(q.Get("request"))
	if err != nil {
		return nil
	}
	var of int64
	if f := q.Get("for"); f != "all" {
		if of, err = atoll.ParseID(f); err != nil {
			return nil
		}
	}
	req, err := s.DB.Request(ctx, reqID)
	if atoll.ErrorCode(err) == atoll.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if req.PullID != page.Pull.ID {
		return nil
	}
	n, err := s.notice(ctx, page.Pull, req, of)
	if err != nil {
		return err
	}
	if of == 0 {
		page.AllNotice = n
		return nil
	}
	if page.Rows == nil { // the notice alone: a row of its own
		page.Rows = []templates.ProjectRow{{Project: atoll.Project{ID: of}, Notice: n}}
		return nil
	}
	for i := range page.Rows {
		if page.Rows[i].Project.ID == of {
			page.Rows[i].Notice = n
		}
	}
	return nil
}

// notice describes request req sent for project `of` (0: all); it follows
// the change stream while the request or any of its jobs can change.
func (s *Server) notice(ctx context.Context, pull *atoll.Pull, req *atoll.Request, of int64) (*templates.RequestNotice, error) {
	jobs, err := s.DB.RequestJobs(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	n := &templates.RequestNotice{Request: req, Command: requestCommand(req.Comment), Jobs: jobs, Repo: pull.Repo, Pull: pull.Number}
	final := req.State == atoll.RequestDone || req.State == atoll.RequestInterrupted
	for _, j := range jobs {
		final = final && j.Final()
	}
	if !final {
		n.Live = templates.NoticeSectionPath(pull.Repo, pull.Number, req.ID, of)
	}
	return n, nil
}

// requestCommand is the command word of a request's comment
// ("atlantis plan -p x" → "plan").
func requestCommand(comment string) string {
	if f := strings.Fields(comment); len(f) > 1 {
		return f[1]
	}
	return "command"
}

// addApprovals gives each row with a plan its approval panel, which returns
// to the row after a decision.
func (s *Server) addApprovals(ctx context.Context, pull *atoll.Pull, rows []templates.ProjectRow) error {
	for i := range rows {
		row := &rows[i]
		if row.Plan == nil {
			continue
		}
		v, err := s.approvalView(ctx, row.Plan.ID, paths.Project(pull.Repo, pull.Number, row.Project.ID))
		if err != nil {
			return err
		}
		row.Approval = &v
	}
	return nil
}

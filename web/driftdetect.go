package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/drift"
)

// handleDriftDetect is POST /api/drift/detect: a drift check of the
// branch's head (every project, or those named by name or path), waited
// for, its results recorded and returned. detection_id is the check's
// request id.
func (s *Server) handleDriftDetect(w http.ResponseWriter, r *http.Request) {
	var in drift.DetectRequest
	if !s.readDriftRequest(w, r, drift.MsgDetectionDisabled, &in) {
		return
	}
	check, e := s.driftCheck(r, in.Repository, in.Type, in.Ref, in.BaseBranch, in.Projects, in.Paths)
	if e != nil {
		s.driftFail(w, r, e)
		return
	}
	out, err := s.runDrift(w, r, check)
	if err != nil {
		s.driftError(w, r, err)
		return
	}
	if msg := out.Request.Error; msg != "" && len(out.Projects) == 0 {
		// The check did not run: a project the branch does not have (the
		// user's to fix), else a checkout or config failure (logged).
		if strings.HasPrefix(msg, "No project ") {
			s.driftFail(w, r, drift.Invalid(drift.MsgValidationFailed, "projects", msg))
			return
		}
		s.driftError(w, r, fmt.Errorf("drift check %d: %s", out.Request.ID, msg))
		return
	}
	id := strconv.FormatInt(out.Request.ID, 10)
	var projects []drift.ProjectDrift
	for _, p := range out.Projects {
		pd := outcomeDrift(out, p)
		pd.DetectionID = id
		if in.IncludePlanOutput && p.Result.Error == "" {
			pd.PlanOutput = p.Output
		}
		projects = append(projects, pd)
	}
	s.driftOK(w, r, drift.DetectStatusCode(projects), drift.NewDetectResponse(id, in.Repository, out.Request.CreatedAt, projects))
}

// readDriftRequest reads and validates a drift POST's body into in; false
// once it answered: drift checks off here (503 disabled), a body that
// does not parse, or field errors (400 with their details).
func (s *Server) readDriftRequest(w http.ResponseWriter, r *http.Request, disabled string, in interface{ Validate() []drift.FieldError }) bool {
	if !s.DriftDetection || s.Drift == nil {
		s.driftFail(w, r, &drift.EnvelopeError{Code: drift.CodeServiceUnavailable, Message: disabled})
		return false
	}
	if e := readDriftBody(r, in); e != nil {
		s.driftFail(w, r, e)
		return false
	}
	if errs := in.Validate(); len(errs) > 0 {
		s.driftFail(w, r, &drift.EnvelopeError{Code: drift.CodeValidation, Message: drift.MsgValidationFailed, Details: errs})
		return false
	}
	return true
}

// readDriftBody reads a drift request's JSON body into v (unknown fields
// are ignored, as in Atlantis).
func readDriftBody(r *http.Request, v any) *drift.EnvelopeError {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return &drift.EnvelopeError{Code: drift.CodeValidation, Message: drift.MsgReadBody}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &drift.EnvelopeError{Code: drift.CodeValidation, Message: "failed to parse JSON: " + err.Error()}
	}
	return nil
}

// msgBranchOnly is the field error of a ref Atoll cannot check: it plans
// a branch's head, not a commit or a tag.
const msgBranchOnly = "Atoll checks branch heads: give a branch"

// driftCheck is the drift check a detect or remediate request asks for,
// or why it cannot run: a ref that is no branch (400), a repository
// unknown to Atoll (404) or of another VCS.
func (s *Server) driftCheck(r *http.Request, repository, vcsType, ref, base string, projects []string, paths []drift.PathSelector) (atoll.DriftCheck, *drift.EnvelopeError) {
	if drift.NeedsBaseBranch(strings.TrimSpace(ref)) || strings.HasPrefix(strings.TrimSpace(ref), "refs/tags/") {
		return atoll.DriftCheck{}, drift.Invalid(drift.MsgValidationFailed, "ref", msgBranchOnly)
	}
	branch := drift.NormalizeRef(ref)
	if b := drift.NormalizeRef(base); b != "" && b != branch {
		return atoll.DriftCheck{}, drift.Invalid(drift.MsgValidationFailed, "base_branch", "Atoll checks branch heads: base_branch, when given, must be the ref's branch")
	}
	repo, e := s.driftRepo(r.Context(), vcsType, repository)
	if e != nil {
		return atoll.DriftCheck{}, e
	}
	c := atoll.DriftCheck{Repo: *repo, Branch: branch, Projects: projects, User: actor(r), Source: source(r)}
	for _, p := range paths {
		dir, _ := drift.CleanPath(p.Directory)
		c.Paths = append(c.Paths, atoll.DriftPath{Dir: dir, Workspace: p.Workspace})
	}
	return c, nil
}

// runDrift queues check and waits for its outcome, as long as /api/plan
// waits.
func (s *Server) runDrift(w http.ResponseWriter, r *http.Request, check atoll.DriftCheck) (*atoll.DriftOutcome, error) {
	liftDeadlines(w, time.Now().Add(apiWait+time.Minute))
	req, err := s.Drift.CheckDrift(r.Context(), check)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiWait)
	defer cancel()
	out, err := s.Drift.DriftOutcome(ctx, req.ID)
	if err != nil && ctx.Err() != nil {
		return nil, atoll.Errorf(atoll.EUNAVAILABLE, "gave up waiting for drift check %d", req.ID)
	}
	return out, err
}

// outcomeDrift is one project of a finished check as the API shows it.
func outcomeDrift(out *atoll.DriftOutcome, p atoll.DriftProjectOutcome) drift.ProjectDrift {
	pd := drift.ProjectDrift{Directory: p.Job.Dir, Workspace: p.Job.Workspace, Ref: out.Branch, BaseBranch: out.Branch,
		ResolvedCommit: out.HeadSHA, LastChecked: p.Job.CreatedAt, Error: p.Result.Error}
	if p.Job.FinishedAt != nil {
		pd.LastChecked = *p.Job.FinishedAt
	}
	pd.ProjectName = p.Job.Project
	if pd.Error == "" {
		res := p.Result
		pd.SetDetails(drift.FromPlan(res.Add, res.Change, res.Destroy, res.Import, res.Forget, res.ChangedOutside, drift.SummaryLine(p.Output)))
	}
	return pd
}

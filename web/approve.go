package web

import (
	"context"
	"net/http"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// maxForm bounds the body of the approval and freeze forms.
const maxForm = 64 << 10

// Roles, for route tables.
const (
	viewer   = atoll.RoleViewer
	operator = atoll.RoleOperator
	admin    = atoll.RoleAdmin
)

// handleApprovePlan and handleRejectPlan decide on a plan from its page's
// form (reason, back).
func (s *Server) handleApprovePlan(w http.ResponseWriter, r *http.Request) {
	s.decideForm(w, r, atoll.DecisionApprove)
}

func (s *Server) handleRejectPlan(w http.ResponseWriter, r *http.Request) {
	s.decideForm(w, r, atoll.DecisionReject)
}

func (s *Server) decideForm(w http.ResponseWriter, r *http.Request, decision string) {
	id, err := atoll.ParseID(r.PathValue("id"))
	if err != nil {
		s.failed(w, r, "/", err)
		return
	}
	if err := readForm(w, r, maxForm); err != nil {
		s.failed(w, r, paths.Plan(id), err)
		return
	}
	back := r.PostFormValue("back")
	if back == "" {
		back = paths.Plan(id)
	}
	back = safeBack(back)
	a, err := s.decide(r, id, decision, r.PostFormValue("reason"))
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	view, err := s.approvalView(r.Context(), id, back)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	msg := decisionMessage(a, view.Required)
	if isHTMX(r) {
		// The forms aim at the panel's message box, where a refusal is
		// shown; a decision replaces the whole panel, which says it there.
		view.Message = msg
		w.Header().Set("HX-Retarget", "#approval-"+r.PathValue("id"))
		w.Header().Set("HX-Reswap", "outerHTML")
	}
	s.done(w, r, back, msg, templates.ApprovalPanel(view), a)
}

// decide records the signed-in user's decision on plan id.
func (s *Server) decide(r *http.Request, id int64, decision, reason string) (*atoll.Approval, error) {
	u := atoll.UserFromContext(r.Context())
	if u == nil {
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "Sign in first.")
	}
	return s.DB.DecidePlan(r.Context(), atoll.PlanDecision{PlanID: id, Decision: decision, User: u.Name, Reason: reason,
		Source: source(r), TTL: s.ApprovalTTL, FourEyes: s.ApprovalFourEyes})
}

func decisionMessage(a *atoll.Approval, required bool) string {
	if a.Decision == atoll.DecisionReject {
		return "Plan rejected: it will not be applied while this stands."
	}
	msg := "Plan approved until " + a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST") + "."
	if !required {
		msg += " (This project does not require an approval.)"
	}
	return msg
}

// approvalView gathers what templates.ApprovalPanel shows of plan id for
// the request's user; back is where its forms return. The plan and pull
// request pages call it to show the panel.
func (s *Server) approvalView(ctx context.Context, id int64, back string) (templates.ApprovalView, error) {
	ref, err := s.DB.PlanRef(ctx, id)
	if err != nil {
		return templates.ApprovalView{}, err
	}
	history, err := s.DB.PlanApprovals(ctx, id)
	if err != nil {
		return templates.ApprovalView{}, err
	}
	v := templates.ApprovalView{PlanID: id, PlanSHA256: ref.SHA256, Required: s.approvalRequired(ref),
		History: history, Now: s.now(), Back: back}
	if len(history) > 0 {
		v.Current = &history[0]
	}
	switch {
	case ref.Applied:
		v.Closed = "This plan was applied."
	case !ref.Latest:
		v.Closed = "A newer plan of this project exists: decide on that one."
	case ref.Discarded:
		v.Closed = "This plan was discarded (unlocked, or the pull request changed or closed)."
	}
	u := atoll.UserFromContext(ctx)
	v.CanDecide = u != nil && u.Role.Allows(operator) && v.Closed == ""
	return v, nil
}

// approvalRequired reports whether --plan-approval requires an approval of
// the plan.
func (s *Server) approvalRequired(ref *atoll.PlanRef) bool {
	return s.Approvals != nil && s.Approvals.Requires(ref.Repo, ref.Project, ref.Dir)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now().UTC()
}

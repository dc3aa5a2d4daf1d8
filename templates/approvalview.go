package templates

import (
	"net/url"
	"strconv"
	"time"

	"github.com/atollhq/atoll"
)

// ApprovalView is what ApprovalPanel shows of one plan's approval.
type ApprovalView struct {
	PlanID     int64
	PlanSHA256 string
	// Required is true when --plan-approval requires an approval in Atoll
	// before the plan is applied.
	Required bool
	// Current is the newest decision (the one that counts), nil if none;
	// History is every decision, newest first.
	Current *atoll.Approval
	History []atoll.Approval
	// CanDecide shows the approve and reject forms: the user is an
	// operator and the plan can still be decided on.
	CanDecide bool
	// Closed says why the plan can no longer be decided on (applied,
	// discarded, superseded), "" while it can.
	Closed string
	Now    time.Time
	// Back is where a plain form post returns to (the page showing the
	// panel).
	Back string
	// Message is the outcome of the decision just made, shown in the
	// panel's message box when the panel is the answer to it (htmx).
	Message string
}

// Approval states, as ApprovalView.State gives them.
const (
	ApprovalApproved    = "approved"
	ApprovalRejected    = "rejected"
	ApprovalExpired     = "expired"
	ApprovalOtherPlan   = "other-plan"
	ApprovalPending     = "pending"
	ApprovalNotRequired = "not-required"
)

// State sums the plan's approval up.
func (v ApprovalView) State() string {
	c := v.Current
	switch {
	case c == nil && v.Required:
		return ApprovalPending
	case c == nil:
		return ApprovalNotRequired
	case c.Decision == atoll.DecisionReject:
		return ApprovalRejected
	case c.PlanSHA256 != v.PlanSHA256:
		return ApprovalOtherPlan
	case c.Expired(v.Now):
		return ApprovalExpired
	}
	return ApprovalApproved
}

// Approved reports whether the plan may be applied as far as approval goes.
func (v ApprovalView) Approved() bool {
	s := v.State()
	return s == ApprovalApproved || (!v.Required && s != ApprovalRejected)
}

// reasonSuffix is ": reason", or "" without one.
func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// sourceSuffix is " from address", or "" without one.
func sourceSuffix(source string) string {
	if source == "" {
		return ""
	}
	return " from " + source
}

func approvalID(v ApprovalView) string { return "approval-" + id(v.PlanID) }

func approvalMsgID(v ApprovalView) string { return approvalID(v) + "-msg" }

func decidePath(v ApprovalView, decision string) string {
	return paths.PlanDecision(v.PlanID, decision)
}

func approvalBadgeClass(state string) string {
	switch state {
	case ApprovalApproved:
		return "badge-succeeded"
	case ApprovalRejected:
		return "badge-failed"
	case ApprovalExpired, ApprovalOtherPlan, ApprovalPending:
		return "badge-stale"
	}
	return "badge-pending"
}

func approvalBadgeText(state string) string {
	switch state {
	case ApprovalOtherPlan:
		return "approval outdated"
	case ApprovalPending:
		return "approval required"
	case ApprovalNotRequired:
		return "no approval required"
	}
	return state
}

// AuditPage is the audit log: who did what, when and from where.
type AuditPage struct {
	Meta   Meta
	Filter atoll.EventFilter
	Events []atoll.Event
	// Older links the next page back, "" on the last page.
	Older string
	// Freeze is the apply freeze and its toggle, for admins.
	CanFreeze bool
}

// AuditPath is the audit page with filter f.
func AuditPath(f atoll.EventFilter) string {
	q := url.Values{}
	for k, v := range map[string]string{"actor": f.Actor, "action": f.Action, "repo": f.Repo} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339))
	}
	if f.Before > 0 {
		q.Set("before", strconv.FormatInt(f.Before, 10))
	}
	if len(q) == 0 {
		return "/audit"
	}
	return "/audit?" + q.Encode()
}

func sinceValue(f atoll.EventFilter) string {
	if f.Since.IsZero() {
		return ""
	}
	return f.Since.UTC().Format(time.RFC3339)
}

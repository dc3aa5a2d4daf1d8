package atoll

import "time"

// The runner's writes that span more than one row: each is one store
// method, one transaction. The runner supplies its decisions (the
// approval and policy rules of its config) as functions the store calls
// inside the transaction, so a change committed meanwhile still counts.

// ApplyStart is what marking a plan applied checks and records.
type ApplyStart struct {
	PlanID int64
	// Unlocked marks the plan applied without holding its project's lock
	// (locks disabled).
	Unlocked bool
	// Approve decides the plan's approval from its plan, its standing
	// decision and the store's clock; an error refuses the apply.
	Approve func(ref *PlanRef, decision *Approval, now time.Time) (*Approval, error)
	// Policies decides from the plan's policy checks; nil when policy
	// checks are off (they are then not read).
	Policies func(checks []PolicyCheck) error
	// Event is the apply's audit event, given the approval.
	Event func(a *Approval) Event
	// JobID is the apply job. When a worker holds it, its dispatch is
	// marked applying in the same transaction: a worker that asks again
	// (its answer lost with a node) is told yes, not "already applied".
	JobID int64
}

// PlanResult is a plan job's success: the plan, its policy checks, the
// job's final spec and summary, and its audit event.
type PlanResult struct {
	Job     *Job // its ID and final Spec
	Plan    *Plan
	Checks  []PolicyCheck // nil: not checked
	Summary Summary
	// Unlocked stores the plan untied to a lock (on_apply, disabled).
	Unlocked bool
	// Event is the plan's audit event, given the stored plan (its SHA256).
	Event func(p *Plan) Event
}

// LockTake is one job's part of taking a request's locks: when its claim
// is taken now, the job's spec becomes Spec and Event is recorded.
type LockTake struct {
	JobID int64
	Spec  JobSpec
	Event Event
}

// PolicyAction is what one approve_policies does to one policy set.
type PolicyAction int

const (
	PolicySkip    PolicyAction = iota // nothing to do: passed, approved enough, or not targeted
	PolicyApprove                     // record the user's approval
	PolicyClear                       // --clear-policy-approval: remove its approvals
	PolicyRefuse                      // the user may not: the reason says why
)

// PolicyDecisions is one approve_policies on one plan.
type PolicyDecisions struct {
	PlanID int64
	User   string
	// Event is the template of each change's audit event (Action and
	// Detail are set per check); Label names the project in Detail.
	Event Event
	Label string
	// Decide says what to do to check c, and why when refused.
	Decide func(c PolicyCheck) (PolicyAction, string)
}

// Intake is one webhook as recorded: the repository and pull request it
// concerns, and the request it queues.
type Intake struct {
	Repo       Repo
	DeliveryID string
	Kind       string // the webhook's event kind
	Pull       Pull
	Sender     string
	// DiscardPlans discards the pull request's plans: a new head makes
	// them unappliable.
	DiscardPlans bool
	// Request is queued (its ID and PullID are set); a close request
	// releases the pull request's locks first.
	Request *Request
	// CancelMark, when set, cancels the pull request's queued requests
	// before Request, marked with CancelMark(Request.ID).
	CancelMark func(requestID int64) string
}

package atoll

import (
	"context"
	"fmt"
	"time"
)

// Decisions of an Approval.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// Approval is a user's decision on one plan, made in the dashboard or the
// API. It is tied to the plan's hash: a new plan needs a new approval.
type Approval struct {
	ID         int64  `json:"id"`
	PlanID     int64  `json:"plan_id"`
	PlanSHA256 string `json:"plan_sha256"`
	Decision   string `json:"decision"`
	User       string `json:"user"`
	Reason     string `json:"reason,omitempty"`
	// Source is where the decision came from (the client's address).
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Freeze is the global apply freeze: while On, no apply runs, from a pull
// request comment, the dashboard or the API.
type Freeze struct {
	On     bool      `json:"on"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Since  time.Time `json:"since,omitzero"`
}

// Approves reports whether a is a decision that lets the plan with hash
// planSHA256 be applied at now: an approval of that very plan file that has
// not expired. Only a plan's newest decision counts (a later reject
// overrides an approval).
func (a *Approval) Approves(planSHA256 string, now time.Time) bool {
	return a != nil && a.Decision == DecisionApprove && a.PlanSHA256 == planSHA256 && now.Before(a.ExpiresAt)
}

// Expired reports whether a is an approval whose time has run out at now.
func (a *Approval) Expired(now time.Time) bool {
	return a != nil && a.Decision == DecisionApprove && !now.Before(a.ExpiresAt)
}

// DefaultApprovalTTL is how long a plan approval lasts unless
// --approval-ttl says otherwise.
const DefaultApprovalTTL = 7 * 24 * time.Hour

// Message is how a refused apply explains the freeze.
func (f Freeze) Message() string {
	msg := fmt.Sprintf("Applies are frozen by %s since %s", f.By, f.Since.UTC().Format("2006-01-02 15:04 MST"))
	if f.Reason != "" {
		msg += ": " + f.Reason
	}
	return msg + ". Plans still run; an admin can lift the freeze in Atoll."
}

// Refusal is the one refusal of anything that changes the state (an
// apply, an import, a state rm) while the freeze is on: a conflict whose
// message is Message. It is nil while the freeze is off.
func (f Freeze) Refusal() error {
	if !f.On {
		return nil
	}
	return Errorf(ECONFLICT, "%s", f.Message())
}

// PlanRef is what deciding on a plan, or applying it, needs to know about
// the plan: whose it is and whether it can still be applied.
type PlanRef struct {
	ID         int64  `json:"id"`
	SHA256     string `json:"sha256"`
	PullID     int64  `json:"-"`
	ProjectID  int64  `json:"-"`
	Repo       string `json:"repo"`
	VCS        string `json:"-"`
	Pull       int    `json:"pull"`
	PullAuthor string `json:"-"`
	// Trigger is who ran the plan: the VCS login of a comment's author or
	// a webhook's sender, or the Atoll account of a dashboard or API user.
	Trigger   string    `json:"-"`
	Project   string    `json:"project,omitempty"`
	Dir       string    `json:"dir"`
	Workspace string    `json:"workspace"`
	CreatedAt time.Time `json:"created_at"`
	Applied   bool      `json:"applied"`
	Discarded bool      `json:"discarded"`
	// Latest is false once a newer plan of the same project and pull
	// request exists.
	Latest bool `json:"latest"`
}

// Label names the plan's project as comments do.
func (p *PlanRef) Label() string {
	return Project{Name: p.Project, Dir: p.Dir, Workspace: p.Workspace}.Label()
}

// PlanDecision is a user's approve or reject of one plan.
type PlanDecision struct {
	PlanID   int64
	Decision string // DecisionApprove or DecisionReject
	User     string // the signed-in user, never a name from a request body
	Reason   string
	Source   string // where the decision came from (the client's address)
	// TTL is how long an approval lasts (zero: DefaultApprovalTTL).
	TTL time.Duration
	// FourEyes (--approval-four-eyes) also keeps the plan's trigger from
	// approving it; the pull request's author never may.
	FourEyes bool
}

// ApprovalService reads plans' approvals and records decisions.
type ApprovalService interface {
	// PlanRef is ENOTFOUND if there is no plan id.
	PlanRef(ctx context.Context, id int64) (*PlanRef, error)
	PlanApprovals(ctx context.Context, planID int64) ([]Approval, error)
	// DecidePlan records d with its audit event, both or neither. An
	// approval by the pull request's author, or with d.FourEyes by the
	// plan's trigger, is EFORBIDDEN: the user is recognised by account
	// name and by the account's VCS logins.
	DecidePlan(ctx context.Context, d PlanDecision) (*Approval, error)
	// PlanDecision is the plan's standing approval or rejection, or nil.
	PlanDecision(ctx context.Context, planID int64) (*Approval, error)
}

// FreezeService reads and sets the apply freeze.
type FreezeService interface {
	Freeze(ctx context.Context) (Freeze, error)
	// SetFreeze sets it as user from source, with its audit event.
	SetFreeze(ctx context.Context, on bool, user, reason, source string) (Freeze, error)
}

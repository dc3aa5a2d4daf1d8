package atoll

import "time"

// Decisions of an Approval.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// Approval is a user's decision on one plan, made in the dashboard or the
// API. It is tied to the plan's hash: a new plan needs a new approval.
type Approval struct {
	ID         int64     `json:"id"`
	PlanID     int64     `json:"plan_id"`
	PlanSHA256 string    `json:"plan_sha256"`
	Decision   string    `json:"decision"`
	User       string    `json:"user"`
	Reason     string    `json:"reason,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// Freeze is the global apply freeze: while On, no apply runs, from a pull
// request comment, the dashboard or the API.
type Freeze struct {
	On     bool      `json:"on"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Since  time.Time `json:"since,omitzero"`
}

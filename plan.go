package atoll

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Summary counts the resource changes of a plan.
type Summary struct {
	Add     int `json:"add"`
	Change  int `json:"change"`
	Destroy int `json:"destroy"`
	Import  int `json:"import,omitempty"`
}

// NoChanges reports whether the plan changes nothing.
func (s Summary) NoChanges() bool {
	return s.Add == 0 && s.Change == 0 && s.Destroy == 0 && s.Import == 0
}

// PlanSHA256 is the SHA-256 of a plan file, in hex: what a stored plan,
// its approvals and a worker's upload and download are checked by.
func PlanSHA256(file []byte) string {
	sum := sha256.Sum256(file)
	return hex.EncodeToString(sum[:])
}

// emptySHA256 is the hash of an empty plan file: the file of a plan whose
// custom plan stage wrote none.
var emptySHA256 = PlanSHA256(nil)

// Fileless reports whether p's workflow wrote no plan file (a plan stage of
// run steps only, as Atlantis allows): its summary is what the steps
// printed, if anything, and its apply stage runs as written.
func (p *Plan) Fileless() bool { return p.SHA256 == emptySHA256 }

// ChangesNothing reports whether applying p is known to change nothing: a
// plan file without changes. What a fileless plan changes is unknown.
func (p *Plan) ChangesNothing() bool { return !p.Fileless() && p.Summary.NoChanges() }

// Plan is a stored Terraform plan file with its machine-readable summary. It
// is applicable only while the pull request's head is still HeadSHA.
type Plan struct {
	ID        int64      `json:"id"`
	JobID     int64      `json:"job_id"`
	PullID    int64      `json:"-"`
	ProjectID int64      `json:"-"`
	HeadSHA   string     `json:"head_sha"`
	Summary   Summary    `json:"summary"`
	SHA256    string     `json:"sha256"`
	File      []byte     `json:"-"`
	ShowJSON  []byte     `json:"-"`
	CreatedAt time.Time  `json:"created_at"`
	AppliedAt *time.Time `json:"applied_at"`
	// DiscardedAt is when the plan stopped being applicable without being
	// applied: a newer plan, a new commit, an unlock or the pull request's
	// close. Set only by the reads that say so (store.DB.Plan, LatestPlans).
	DiscardedAt *time.Time `json:"discarded_at,omitempty"`
	// PrunedAt is when retention dropped the plan's file and JSON.
	PrunedAt *time.Time `json:"pruned_at,omitempty"`
}

// PlanService reads plans and their policy checks.
type PlanService interface {
	Plan(ctx context.Context, id int64) (*Plan, error)
	LatestPlans(ctx context.Context, pullID int64) ([]*Plan, error)
	PendingPlans(ctx context.Context, pullID int64) ([]*Plan, error)
	PolicyChecks(ctx context.Context, planID int64) ([]PolicyCheck, error)
	// PlanFile is the stored plan file of plan id.
	PlanFile(ctx context.Context, id int64) ([]byte, error)
	// JobPolicyChecks are the policy checks of the plan job jobID made.
	JobPolicyChecks(ctx context.Context, jobID int64) ([]PolicyCheck, error)
	// StorePlan stores a plan job's success: plan, policy checks, spec,
	// final state and audit event, all or none.
	StorePlan(ctx context.Context, r PlanResult) error
	// StorePlanJSON adds the `show -json` of plan id, made after the plan
	// was stored and told (see PlanResult). A plan that has its JSON
	// already, or lost it to retention, keeps what it has. ENOTFOUND: no
	// plan id.
	StorePlanJSON(ctx context.Context, id int64, show []byte) error
	// StartApply checks the freeze, approval and policies again and marks
	// the plan applied, once, with the apply's audit event.
	StartApply(ctx context.Context, s ApplyStart) (*Approval, error)
	// ApprovePolicies applies approve_policies to one plan's checks.
	ApprovePolicies(ctx context.Context, d PolicyDecisions) (checks []PolicyCheck, refusals []string, err error)
}

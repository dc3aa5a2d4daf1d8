package atoll

import (
	"strings"
	"time"
)

// PolicyCheck is the outcome of one conftest policy set on one stored plan
// (--enable-policy-checks). A failed set keeps the plan from being applied
// until enough of the set's owners approve it with approve_policies.
type PolicyCheck struct {
	ID        int64  `json:"id"`
	PlanID    int64  `json:"plan_id"`
	PolicySet string `json:"policy_set"`
	Passed    bool   `json:"passed"`
	// Output is conftest's output, truncated to MaxPolicyOutput bytes.
	Output string `json:"output"`
	// ApproveCount is how many owners must approve a failed set, as the
	// server's config said when the plan was checked.
	ApproveCount int              `json:"approve_count"`
	Approvals    []PolicyApproval `json:"approvals"`
	CreatedAt    time.Time        `json:"created_at"`
	// Sticky (sticky_policy_approvals): the approvals of the project's
	// previous check of this set on the pull request that covered every
	// item of this output were kept for this one.
	Sticky bool `json:"sticky"`
	// ItemHashes are the SHA-256 hex digests of the output's items (the
	// matches of policy_item_regex in the whole output), set on sticky
	// checks: what an approval of this check covers.
	ItemHashes []string `json:"item_hashes,omitempty"`
}

// PolicyApproval is one owner's approve_policies of a failed policy set.
type PolicyApproval struct {
	User      string    `json:"user"`
	CreatedAt time.Time `json:"created_at"`
	// KeptFromPlan is the plan whose check the owner approved, when the
	// approval was kept for a later plan (sticky_policy_approvals).
	KeptFromPlan int64 `json:"kept_from_plan,omitempty"`
	// ItemHashes are the items the owner approved (see
	// PolicyCheck.ItemHashes).
	ItemHashes []string `json:"-"`
}

// PolicyItemsCovered reports whether an approval of items approved covers a check whose
// items are current: every current item was approved. Items that went away
// (a fixed violation) do not matter.
func PolicyItemsCovered(approved, current []string) bool {
	have := make(map[string]bool, len(approved))
	for _, h := range approved {
		have[h] = true
	}
	for _, h := range current {
		if !have[h] {
			return false
		}
	}
	return true
}

// MaxPolicyOutput bounds the conftest output kept per policy set.
const MaxPolicyOutput = 32 << 10

// Satisfied reports whether the set lets the plan be applied: it passed,
// or enough owners approved it.
func (c PolicyCheck) Satisfied() bool {
	return c.Passed || len(c.Approvals) >= max(c.ApproveCount, 1)
}

// ApprovedBy reports whether user approved the set (names compare as VCS
// logins do, without case).
func (c PolicyCheck) ApprovedBy(user string) bool {
	for _, a := range c.Approvals {
		if strings.EqualFold(a.User, user) {
			return true
		}
	}
	return false
}

// PoliciesSatisfied reports whether every set of a plan is satisfied.
func PoliciesSatisfied(checks []PolicyCheck) bool {
	for _, c := range checks {
		if !c.Satisfied() {
			return false
		}
	}
	return true
}

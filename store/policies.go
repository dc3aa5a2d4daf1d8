package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/atollhq/atoll"
)

// InsertPolicyChecks stores the policy set results of plan planID (in the
// transaction that stores the plan, so that no one sees a plan without
// its checks). Output beyond atoll.MaxPolicyOutput is cut, on a rune
// boundary, with a note.
//
// A failed sticky check keeps the approvals of the project's previous check
// of its set on the pull request that cover every item of its output
// (sticky_policy_approvals): they are stored for it and set in
// checks[i].Approvals.
func (tx *Tx) InsertPolicyChecks(planID int64, checks []atoll.PolicyCheck) error {
	for i := range checks {
		c := &checks[i]
		c.PlanID, c.CreatedAt, c.Output = planID, tx.now, truncateOutput(c.Output, atoll.MaxPolicyOutput)
		err := tx.queryRow(`INSERT INTO policy_checks (plan_id, policy_set, passed, output, approve_count, created_at, sticky, item_hashes)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, planID, c.PolicySet, c.Passed, c.Output, c.ApproveCount, ts(tx.now),
			c.Sticky, strings.Join(c.ItemHashes, " ")).Scan(&c.ID)
		if err != nil {
			return fmt.Errorf("store insert policy check %s of plan %d: %w", c.PolicySet, planID, err)
		}
		c.Approvals = nil
		if c.Sticky && !c.Passed {
			if c.Approvals, err = tx.keepPolicyApprovals(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepPolicyApprovals stores, for sticky check c, the approvals of the
// previous check of its set on an earlier plan of the same pull request
// and project that cover c's items, and returns them.
func (tx *Tx) keepPolicyApprovals(c *atoll.PolicyCheck) ([]atoll.PolicyApproval, error) {
	what := fmt.Sprintf("store keep policy approvals of %s on plan %d", c.PolicySet, c.PlanID)
	var prevCheck, prevPlan int64
	err := tx.queryRow(`SELECT c.id, c.plan_id FROM policy_checks c
		JOIN plans p ON p.id = c.plan_id JOIN plans cur ON cur.id = ?
		WHERE p.pull_id = cur.pull_id AND p.project_id = cur.project_id AND p.id < cur.id AND c.policy_set = ?
		ORDER BY p.id DESC LIMIT 1`, c.PlanID, c.PolicySet).Scan(&prevCheck, &prevPlan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	earlier, err := policyApprovals(tx.ctx, tx.tx, `a.check_id = ?`, prevCheck)
	if err != nil {
		return nil, err
	}
	var kept []atoll.PolicyApproval
	for _, a := range earlier {
		if !atoll.PolicyItemsCovered(a.ItemHashes, c.ItemHashes) {
			continue
		}
		if a.KeptFromPlan == 0 {
			a.KeptFromPlan = prevPlan
		}
		// The approval keeps its time and the items it approved: a later
		// plan compares with what the owner saw, not with this output.
		if _, err := tx.exec(`INSERT INTO policy_approvals (check_id, user, created_at, item_hashes, kept_from_plan) VALUES (?, ?, ?, ?, ?)`,
			c.ID, a.User, ts(a.CreatedAt), strings.Join(a.ItemHashes, " "), a.KeptFromPlan); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		kept = append(kept, a.PolicyApproval)
	}
	return kept, nil
}

// truncateOutput keeps at most limit bytes of s.
func truncateOutput(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n... (%d more bytes not kept)", len(s)-cut)
}

// PolicyChecks returns plan planID's policy set results with their
// approvals, by set name; none when the plan was not checked.
func (db *DB) PolicyChecks(ctx context.Context, planID int64) ([]atoll.PolicyCheck, error) {
	return policyChecks(ctx, db.reader(), planID)
}

// JobPolicyChecks returns the policy set results of the plan that plan job
// jobID stored; none when it stored no plan or the plan was not checked.
func (db *DB) JobPolicyChecks(ctx context.Context, jobID int64) ([]atoll.PolicyCheck, error) {
	var planID int64
	err := db.reader().QueryRowContext(ctx, `SELECT id FROM plans WHERE job_id = ?`, jobID).Scan(&planID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("store plan of job %d: %w", jobID, err)
	}
	return policyChecks(ctx, db.reader(), planID)
}

// PolicyChecks returns plan planID's policy set results as this
// transaction sees them.
func (tx *Tx) PolicyChecks(planID int64) ([]atoll.PolicyCheck, error) {
	return policyChecks(tx.ctx, tx.tx, planID)
}

func policyChecks(ctx context.Context, q querier, planID int64) ([]atoll.PolicyCheck, error) {
	what := fmt.Sprintf("policy checks of plan %d", planID)
	rows, err := q.QueryContext(ctx, `SELECT id, plan_id, policy_set, passed, output, approve_count, created_at, sticky, item_hashes
		FROM policy_checks WHERE plan_id = ? ORDER BY policy_set`, planID)
	checks, err := collect(rows, err, what, func(s scanner) (atoll.PolicyCheck, error) {
		var c atoll.PolicyCheck
		var created int64
		var hashes string
		err := s.Scan(&c.ID, &c.PlanID, &c.PolicySet, &c.Passed, &c.Output, &c.ApproveCount, &created, &c.Sticky, &hashes)
		c.CreatedAt, c.ItemHashes = fromTS(created), strings.Fields(hashes)
		return c, err
	})
	if err != nil || len(checks) == 0 {
		return checks, err
	}
	byID := map[int64]*atoll.PolicyCheck{}
	for i := range checks {
		byID[checks[i].ID] = &checks[i]
	}
	approvals, err := policyApprovals(ctx, q, `c.plan_id = ?`, planID)
	if err != nil {
		return nil, err
	}
	for _, a := range approvals {
		if c := byID[a.check]; c != nil {
			c.Approvals = append(c.Approvals, a.PolicyApproval)
		}
	}
	return checks, nil
}

// checkApproval is a policy approval with its check.
type checkApproval struct {
	check int64
	atoll.PolicyApproval
}

// policyApprovals returns the approvals of the checks c matching where, in
// the order they were given.
func policyApprovals(ctx context.Context, q querier, where string, args ...any) ([]checkApproval, error) {
	rows, err := q.QueryContext(ctx, `SELECT a.check_id, a.user, a.created_at, a.item_hashes, COALESCE(a.kept_from_plan, 0) FROM policy_approvals a
		JOIN policy_checks c ON c.id = a.check_id WHERE `+where+` ORDER BY a.id`, args...)
	return collect(rows, err, "policy approvals", func(s scanner) (checkApproval, error) {
		var a checkApproval
		var created int64
		var hashes string
		err := s.Scan(&a.check, &a.User, &created, &hashes, &a.KeptFromPlan)
		a.CreatedAt, a.ItemHashes = fromTS(created), strings.Fields(hashes)
		return a, err
	})
}

// ApprovePolicyCheck records user's approval of policy check checkID.
// Approving twice is ECONFLICT: one owner counts once towards
// approve_count.
func (tx *Tx) ApprovePolicyCheck(checkID int64, user string) error {
	user = strings.TrimSpace(user)
	if user == "" {
		return atoll.Errorf(atoll.EINVALID, "A policy approval needs a user.")
	}
	var kept sql.NullInt64
	err := tx.queryRow(`SELECT kept_from_plan FROM policy_approvals WHERE check_id = ? AND user = ? COLLATE NOCASE`, checkID, user).Scan(&kept)
	switch {
	case err == nil && kept.Valid:
		return atoll.Errorf(atoll.ECONFLICT, "%s already approved this policy set: their approval of plan #%d covers this output too (sticky_policy_approvals); another owner must approve.", user, kept.Int64)
	case err == nil:
		return atoll.Errorf(atoll.ECONFLICT, "%s already approved this policy set.", user)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("store policy approval of check %d: %w", checkID, err)
	}
	var planID int64
	var hashes string
	err = tx.queryRow(`SELECT plan_id, item_hashes FROM policy_checks WHERE id = ?`, checkID).Scan(&planID, &hashes)
	if errors.Is(err, sql.ErrNoRows) {
		return atoll.Errorf(atoll.ENOTFOUND, "Policy check %d not found.", checkID)
	} else if err != nil {
		return fmt.Errorf("store policy check %d: %w", checkID, err)
	}
	// The approval covers the items the owner was shown.
	if _, err := tx.exec(`INSERT INTO policy_approvals (check_id, user, created_at, item_hashes) VALUES (?, ?, ?, ?)`, checkID, user, ts(tx.now), hashes); err != nil {
		return fmt.Errorf("store approve policy check %d: %w", checkID, err)
	}
	tx.notifyPlanOf(planID)
	return nil
}

// ClearPolicyApprovals removes every approval of policy check checkID
// (approve_policies --clear-policy-approval) and returns how many there
// were.
func (tx *Tx) ClearPolicyApprovals(checkID int64) (int, error) {
	res, err := tx.exec(`DELETE FROM policy_approvals WHERE check_id = ?`, checkID)
	if err != nil {
		return 0, fmt.Errorf("store clear approvals of policy check %d: %w", checkID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store clear approvals of policy check %d: %w", checkID, err)
	}
	var planID int64
	if err := tx.queryRow(`SELECT plan_id FROM policy_checks WHERE id = ?`, checkID).Scan(&planID); err == nil {
		tx.notifyPlanOf(planID)
	}
	return int(n), nil
}

// notifyPlanOf tells the plan's pull request's watchers that it changed.
func (tx *Tx) notifyPlanOf(planID int64) {
	var pullID int64
	if err := tx.queryRow(`SELECT pull_id FROM plans WHERE id = ?`, planID).Scan(&pullID); err == nil {
		tx.notifyPull(atoll.TopicPlan, pullID, 0)
	}
}

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
func (tx *Tx) InsertPolicyChecks(planID int64, checks []atoll.PolicyCheck) error {
	for i := range checks {
		c := &checks[i]
		c.PlanID, c.CreatedAt, c.Output = planID, tx.now, truncateOutput(c.Output, atoll.MaxPolicyOutput)
		err := tx.queryRow(`INSERT INTO policy_checks (plan_id, policy_set, passed, output, approve_count, created_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, planID, c.PolicySet, c.Passed, c.Output, c.ApproveCount, ts(tx.now)).Scan(&c.ID)
		if err != nil {
			return fmt.Errorf("store insert policy check %s of plan %d: %w", c.PolicySet, planID, err)
		}
	}
	return nil
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
	rows, err := q.QueryContext(ctx, `SELECT id, plan_id, policy_set, passed, output, approve_count, created_at
		FROM policy_checks WHERE plan_id = ? ORDER BY policy_set`, planID)
	checks, err := collect(rows, err, what, func(s scanner) (atoll.PolicyCheck, error) {
		var c atoll.PolicyCheck
		var created int64
		err := s.Scan(&c.ID, &c.PlanID, &c.PolicySet, &c.Passed, &c.Output, &c.ApproveCount, &created)
		c.CreatedAt = fromTS(created)
		return c, err
	})
	if err != nil || len(checks) == 0 {
		return checks, err
	}
	byID := map[int64]*atoll.PolicyCheck{}
	for i := range checks {
		byID[checks[i].ID] = &checks[i]
	}
	rows, err = q.QueryContext(ctx, `SELECT a.check_id, a.user, a.created_at FROM policy_approvals a
		JOIN policy_checks c ON c.id = a.check_id WHERE c.plan_id = ? ORDER BY a.id`, planID)
	type approval struct {
		check int64
		atoll.PolicyApproval
	}
	approvals, err := collect(rows, err, what, func(s scanner) (approval, error) {
		var a approval
		var created int64
		err := s.Scan(&a.check, &a.User, &created)
		a.CreatedAt = fromTS(created)
		return a, err
	})
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

// ApprovePolicyCheck records user's approval of policy check checkID.
// Approving twice is ECONFLICT: one owner counts once towards
// approve_count.
func (tx *Tx) ApprovePolicyCheck(checkID int64, user string) error {
	user = strings.TrimSpace(user)
	if user == "" {
		return atoll.Errorf(atoll.EINVALID, "A policy approval needs a user.")
	}
	var n int
	if err := tx.queryRow(`SELECT COUNT(*) FROM policy_approvals WHERE check_id = ? AND user = ? COLLATE NOCASE`, checkID, user).Scan(&n); err != nil {
		return fmt.Errorf("store policy approval of check %d: %w", checkID, err)
	} else if n > 0 {
		return atoll.Errorf(atoll.ECONFLICT, "%s already approved this policy set.", user)
	}
	var planID int64
	err := tx.queryRow(`SELECT plan_id FROM policy_checks WHERE id = ?`, checkID).Scan(&planID)
	if errors.Is(err, sql.ErrNoRows) {
		return atoll.Errorf(atoll.ENOTFOUND, "Policy check %d not found.", checkID)
	} else if err != nil {
		return fmt.Errorf("store policy check %d: %w", checkID, err)
	}
	if _, err := tx.exec(`INSERT INTO policy_approvals (check_id, user, created_at) VALUES (?, ?, ?)`, checkID, user, ts(tx.now)); err != nil {
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

package store

import (
	"context"
	"fmt"

	"github.com/atollhq/atoll"
)

// StartApply marks a plan applied, once, after checking again in the same
// transaction the freeze, the plan's approval and its policy checks: a
// freeze, a reject or a cleared policy approval committed after the first
// check still stops the apply. It returns the approval the apply ran under.
func (db *DB) StartApply(ctx context.Context, s atoll.ApplyStart) (*atoll.Approval, error) {
	var approval *atoll.Approval
	err := db.Update(ctx, func(tx *Tx) error {
		approval = nil // fn may run again
		if f, err := tx.Freeze(); err != nil {
			return err
		} else if err := f.Refusal(); err != nil {
			return err
		}
		ref, err := tx.PlanRef(s.PlanID)
		if err != nil {
			return err
		}
		decision, err := tx.PlanDecision(s.PlanID)
		if err != nil {
			return err
		}
		a, err := s.Approve(ref, decision, tx.Now())
		if err != nil {
			return err
		}
		approval = a
		if s.Policies != nil {
			checks, err := tx.PolicyChecks(s.PlanID)
			if err != nil {
				return err
			}
			if err := s.Policies(checks); err != nil {
				return err
			}
		}
		if s.Unlocked {
			err = tx.MarkUnlockedPlanApplied(s.PlanID)
		} else {
			err = tx.MarkPlanApplied(s.PlanID)
		}
		if err != nil {
			return err
		}
		if s.JobID != 0 {
			if _, err := tx.exec(`UPDATE dispatches SET applying = 1 WHERE job_id = ? AND state = ?`, s.JobID, atoll.DispatchClaimed); err != nil {
				return fmt.Errorf("store mark dispatch of job %d applying: %w", s.JobID, err)
			}
		}
		return tx.AddEvent(s.Event(approval))
	})
	return approval, err
}

// StorePlan stores a plan job's success: the plan, its policy checks, the
// job's spec and its final state with the audit event, in one commit, so
// no one is told of an unstored plan.
func (db *DB) StorePlan(ctx context.Context, r atoll.PlanResult) error {
	return db.Update(ctx, func(tx *Tx) error {
		var err error
		if r.Unlocked {
			err = tx.InsertUnlockedPlan(r.Plan)
		} else {
			err = tx.InsertPlan(r.Plan)
		}
		if err != nil {
			return err
		}
		if r.Checks != nil {
			if err := tx.InsertPolicyChecks(r.Plan.ID, r.Checks); err != nil {
				return err
			}
		}
		if err := tx.SetJobSpec(r.Job.ID, r.Job.Spec); err != nil {
			return err
		}
		summary := r.Summary
		if err := tx.FinishJob(r.Job.ID, atoll.JobSucceeded, "", &summary); err != nil {
			return err
		}
		return tx.AddEvent(r.Event(r.Plan))
	})
}

// TakeJobLocks takes every claimed lock for the pull request, or none:
// when another pull request holds any, it takes nothing and returns the
// holders by project id. For each claim taken now (claims[i].Taken), the
// job of takes[i] gets its spec and audit event in the same transaction.
func (db *DB) TakeJobLocks(ctx context.Context, pullID int64, user string, claims []atoll.LockClaim, takes []atoll.LockTake) (map[int64]*atoll.Lock, error) {
	var holders map[int64]*atoll.Lock
	err := db.Update(ctx, func(tx *Tx) (err error) {
		if holders, err = tx.TakeLocks(pullID, user, claims); err != nil || len(holders) > 0 {
			return err
		}
		for i, t := range takes {
			if !claims[i].Taken {
				continue
			}
			if err := tx.SetJobSpec(t.JobID, t.Spec); err != nil {
				return err
			}
			if err := tx.AddEvent(t.Event); err != nil {
				return err
			}
		}
		return nil
	})
	return holders, err
}

// ApprovePolicies applies a's decisions to each policy check of its plan,
// each change with its audit event, and returns the checks as they stand
// after, with the refusals.
func (db *DB) ApprovePolicies(ctx context.Context, a atoll.PolicyDecisions) (checks []atoll.PolicyCheck, refusals []string, err error) {
	err = db.Update(ctx, func(tx *Tx) error {
		refusals = nil
		cur, err := tx.PolicyChecks(a.PlanID)
		if err != nil {
			return err
		}
		for _, c := range cur {
			action, why := a.Decide(c)
			var verb string
			switch action {
			case atoll.PolicyRefuse:
				refusals = append(refusals, why)
				continue
			case atoll.PolicyApprove:
				verb, err = "policy.approve", tx.ApprovePolicyCheck(c.ID, a.User)
			case atoll.PolicyClear:
				verb = "policy.clear"
				_, err = tx.ClearPolicyApprovals(c.ID)
			default:
				continue
			}
			if err != nil {
				return err
			}
			e := a.Event
			e.Action, e.Detail = verb, fmt.Sprintf("%s: policy set %s of plan %d", a.Label, c.PolicySet, a.PlanID)
			if err := tx.AddEvent(e); err != nil {
				return err
			}
		}
		checks, err = tx.PolicyChecks(a.PlanID)
		return err
	})
	return checks, refusals, err
}

// FinishStateJob records an import or state rm's success: the project's
// unapplied plans are discarded (the state they planned against changed),
// the job finishes, and its audit event (given how many plans went) is
// recorded, in one transaction. It returns how many plans were discarded.
func (db *DB) FinishStateJob(ctx context.Context, j *atoll.Job, event func(discarded int) atoll.Event) (int, error) {
	var n int
	err := db.Update(ctx, func(tx *Tx) (err error) {
		if n, err = tx.DiscardProjectPlans(j.PullID, j.ProjectID); err != nil {
			return err
		}
		if err := tx.FinishJob(j.ID, atoll.JobSucceeded, "", nil); err != nil {
			return err
		}
		return tx.AddEvent(event(n))
	})
	return n, err
}

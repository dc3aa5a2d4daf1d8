package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/atollhq/atoll"
)

func planRef(ctx context.Context, q querier, id int64) (*atoll.PlanRef, error) {
	var p atoll.PlanRef
	var created int64
	var applied, discarded sql.NullInt64
	err := q.QueryRowContext(ctx, `
		SELECT pl.id, pl.sha256, pl.pull_id, pl.project_id, r.owner || '/' || r.name, r.vcs, pu.number, pu.author, COALESCE(j.user, ''),
			pr.name, pr.dir, pr.workspace, pl.created_at, pl.applied_at, pl.discarded_at,
			NOT EXISTS (SELECT 1 FROM plans n WHERE n.pull_id = pl.pull_id AND n.project_id = pl.project_id AND n.id > pl.id)
		FROM plans pl JOIN pulls pu ON pu.id = pl.pull_id JOIN repos r ON r.id = pu.repo_id JOIN projects pr ON pr.id = pl.project_id
			LEFT JOIN jobs j ON j.id = pl.job_id
		WHERE pl.id = ?`, id).Scan(&p.ID, &p.SHA256, &p.PullID, &p.ProjectID, &p.Repo, &p.VCS, &p.Pull, &p.PullAuthor, &p.Trigger,
		&p.Project, &p.Dir, &p.Workspace, &created, &applied, &discarded, &p.Latest)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Plan %d not found.", id)
	} else if err != nil {
		return nil, fmt.Errorf("store plan %d: %w", id, err)
	}
	p.CreatedAt, p.Applied, p.Discarded = fromTS(created), applied.Valid, discarded.Valid
	return &p, nil
}

// PlanRef returns plan id's reference (ENOTFOUND if there is none).
func (db *DB) PlanRef(ctx context.Context, id int64) (*atoll.PlanRef, error) {
	return planRef(ctx, db.reader(), id)
}

// PlanRef returns plan id's reference as this transaction sees it.
func (tx *Tx) PlanRef(id int64) (*atoll.PlanRef, error) { return planRef(tx.ctx, tx.tx, id) }

// maxReason bounds an approval's reason, which is shown in pull request
// comments.
const maxReason = 1000

// DecidePlan records d and its audit event, in this transaction: both or
// neither. The decision is tied to the plan's current hash. Only the latest
// plan of its project, neither applied nor discarded, can be decided on
// (ECONFLICT, nothing written); a pull request's author cannot approve its
// plans (EFORBIDDEN), as a GitHub review or Atlantis's approved requirement
// needs someone other than the author, and with d.FourEyes neither can the
// plan's trigger (approverRefusal).
func (tx *Tx) DecidePlan(d atoll.PlanDecision) (*atoll.Approval, error) {
	d.Reason = strings.TrimSpace(d.Reason)
	switch {
	case d.Decision != atoll.DecisionApprove && d.Decision != atoll.DecisionReject:
		return nil, atoll.Errorf(atoll.EINVALID, "A decision is %q or %q, not %q.", atoll.DecisionApprove, atoll.DecisionReject, d.Decision)
	case d.User == "":
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "Sign in first: decisions are recorded under the signed-in user.")
	case utf8.RuneCountInString(d.Reason) > maxReason || !utf8.ValidString(d.Reason):
		return nil, atoll.Errorf(atoll.EINVALID, "The reason must be at most %d characters of text.", maxReason)
	case d.Decision == atoll.DecisionReject && d.Reason == "":
		return nil, atoll.Errorf(atoll.EINVALID, "Say why the plan is rejected: the reason is shown on the pull request.")
	}
	p, err := tx.PlanRef(d.PlanID)
	if err != nil {
		return nil, err
	}
	verb := "approve"
	if d.Decision == atoll.DecisionReject {
		verb = "reject"
	}
	switch {
	case p.Applied:
		return nil, atoll.Errorf(atoll.ECONFLICT, "Cannot %s plan %d of %s: it was already applied.", verb, p.ID, p.Label())
	case p.Discarded && !p.Latest:
		return nil, atoll.Errorf(atoll.ECONFLICT, "Cannot %s plan %d of %s: it is not the latest plan of the project; decide on the newest one.", verb, p.ID, p.Label())
	case p.Discarded:
		return nil, atoll.Errorf(atoll.ECONFLICT, "Cannot %s plan %d of %s: it was discarded (unlocked, or the pull request changed or closed). Plan again.", verb, p.ID, p.Label())
	case !p.Latest:
		return nil, atoll.Errorf(atoll.ECONFLICT, "Cannot %s plan %d of %s: it is not the latest plan of the project; decide on the newest one.", verb, p.ID, p.Label())
	}
	if d.Decision == atoll.DecisionApprove {
		if err := tx.approverRefusal(p, d.User, d.FourEyes); err != nil {
			return nil, err
		}
	}
	ttl := d.TTL
	if ttl <= 0 {
		ttl = atoll.DefaultApprovalTTL
	}
	a := &atoll.Approval{PlanID: p.ID, PlanSHA256: p.SHA256, Decision: d.Decision, User: d.User, Reason: d.Reason,
		Source: d.Source, CreatedAt: tx.now, ExpiresAt: tx.now.Add(ttl)}
	err = tx.queryRow(`INSERT INTO plan_approvals (plan_id, plan_sha256, decision, user, reason, source, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		a.PlanID, a.PlanSHA256, a.Decision, a.User, a.Reason, a.Source, ts(a.CreatedAt), ts(a.ExpiresAt)).Scan(&a.ID)
	if err != nil {
		return nil, fmt.Errorf("store %s plan %d: %w", verb, p.ID, err)
	}
	detail := fmt.Sprintf("plan %d of %s (sha256 %s)", p.ID, p.Label(), shortHash(p.SHA256))
	if d.Decision == atoll.DecisionApprove {
		detail += " until " + a.ExpiresAt.Format(time.RFC3339)
	}
	if a.Reason != "" {
		detail += ": " + a.Reason
	}
	if err := tx.AddEvent(atoll.Event{Actor: d.User, Action: "plan." + verb, Repo: p.Repo, Pull: p.Pull, Detail: detail, Source: d.Source}); err != nil {
		return nil, err
	}
	tx.Notify(atoll.Change{Topic: atoll.TopicApproval, Repo: p.Repo, Pull: p.Pull})
	return a, nil
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

const approvalColumns = `id, plan_id, plan_sha256, decision, user, reason, source, created_at, expires_at`

func scanApproval(s scanner) (atoll.Approval, error) {
	var a atoll.Approval
	var created, expires int64
	err := s.Scan(&a.ID, &a.PlanID, &a.PlanSHA256, &a.Decision, &a.User, &a.Reason, &a.Source, &created, &expires)
	a.CreatedAt, a.ExpiresAt = fromTS(created), fromTS(expires)
	return a, err
}

// PlanApprovals lists every decision on a plan, newest first: the first is
// the one that counts.
func (db *DB) PlanApprovals(ctx context.Context, planID int64) ([]atoll.Approval, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT `+approvalColumns+` FROM plan_approvals WHERE plan_id = ? ORDER BY id DESC`, planID)
	return collect(rows, err, "plan approvals", scanApproval)
}

func latestDecision(ctx context.Context, q querier, planID int64) (*atoll.Approval, error) {
	a, err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM plan_approvals WHERE plan_id = ? ORDER BY id DESC LIMIT 1`, planID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("store decision on plan %d: %w", planID, err)
	}
	return &a, nil
}

// PlanDecision returns the newest decision on a plan, or nil.
func (db *DB) PlanDecision(ctx context.Context, planID int64) (*atoll.Approval, error) {
	return latestDecision(ctx, db.reader(), planID)
}

// PlanDecision returns the newest decision on a plan as this transaction
// sees it, or nil: the apply checks it in the transaction that marks the
// plan applied, so that a reject that commits first always wins.
func (tx *Tx) PlanDecision(planID int64) (*atoll.Approval, error) {
	return latestDecision(tx.ctx, tx.tx, planID)
}

// PlanApprovers lists who holds a valid approval (the newest decision, an
// approval of the plan's current hash, not expired) of a pending plan of a
// pull request. For a local repository these count as the pull request's
// review: there is nowhere else to review it.
func (db *DB) PlanApprovers(ctx context.Context, pullID int64) ([]string, error) {
	rows, err := db.reader().QueryContext(ctx, `
		SELECT DISTINCT a.user FROM plans p JOIN plan_approvals a ON a.id = (
			SELECT id FROM plan_approvals WHERE plan_id = p.id ORDER BY id DESC LIMIT 1)
		WHERE p.pull_id = ? AND p.applied_at IS NULL AND p.discarded_at IS NULL
			AND a.decision = 'approve' AND a.plan_sha256 = p.sha256 AND a.expires_at > ?
		ORDER BY a.user`, pullID, ts(db.Now()))
	return collect(rows, err, "plan approvers", func(s scanner) (string, error) {
		var u string
		return u, s.Scan(&u)
	})
}

// DecidePlan is Tx.DecidePlan in a transaction of its own: the decision and
// its audit event, both or neither.
func (db *DB) DecidePlan(ctx context.Context, d atoll.PlanDecision) (*atoll.Approval, error) {
	var a *atoll.Approval
	err := db.Update(ctx, func(tx *Tx) (err error) {
		a, err = tx.DecidePlan(d)
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// decide records a decision on a plan as user and returns it.
func decide(db *store.DB, planID int64, decision, user, reason string, ttl time.Duration) (*atoll.Approval, error) {
	var a *atoll.Approval
	err := db.Update(context.Background(), func(tx *store.Tx) (err error) {
		a, err = tx.DecidePlan(atoll.PlanDecision{PlanID: planID, Decision: decision, User: user, Reason: reason, Source: "10.1.2.3", TTL: ttl})
		return err
	})
	return a, err
}

// counts returns how many decisions and audit events are stored.
func counts(t *testing.T, db *store.DB, planID int64) (decisions, events int) {
	t.Helper()
	ds, err := db.PlanApprovals(context.Background(), planID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := db.Events(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(ds), len(evs)
}

func TestDecidePlanApprovalLifecycle(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	f := seed(t, db, 1)
	takeLock(t, db, f.projectID, f.pullID)
	plan, err := planFor(t, db, f.pullID, f.projectID)
	if err != nil {
		t.Fatal(err)
	}

	// Approve: tied to the plan's hash, expires after the TTL, audited in
	// the same transaction with where it came from.
	a, err := decide(db, plan.ID, atoll.DecisionApprove, "bob", "looks right", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if a.PlanSHA256 != plan.SHA256 || a.User != "bob" || !a.ExpiresAt.Equal(now.Add(time.Hour)) || a.Source != "10.1.2.3" {
		t.Fatalf("approval = %+v", a)
	}
	current, err := db.PlanDecision(ctx, plan.ID)
	if err != nil || !current.Approves(plan.SHA256, now) {
		t.Fatalf("current decision = %+v, %v", current, err)
	}
	if approvers, err := db.PlanApprovers(ctx, f.pullID); err != nil || len(approvers) != 1 || approvers[0] != "bob" {
		t.Fatalf("plan approvers = %v, %v", approvers, err)
	}
	evs, err := db.AuditEvents(ctx, atoll.EventFilter{Action: "plan.approve"})
	if err != nil || len(evs) != 1 || evs[0].Actor != "bob" || evs[0].Source != "10.1.2.3" || evs[0].Repo != "acme/infra" ||
		!strings.Contains(evs[0].Detail, "looks right") {
		t.Fatalf("approve events = %+v, %v", evs, err)
	}

	// Expiry: past the TTL the approval no longer approves.
	if current.Approves(plan.SHA256, now.Add(time.Hour)) || !current.Expired(now.Add(time.Hour)) {
		t.Fatal("an approval still approves at its expiry")
	}
	db.Now = func() time.Time { return now.Add(2 * time.Hour) }
	if approvers, _ := db.PlanApprovers(ctx, f.pullID); len(approvers) != 0 {
		t.Fatalf("expired approval still counts: %v", approvers)
	}
	db.Now = func() time.Time { return now }

	// Hash binding: the approval does not approve another plan file.
	if current.Approves("another-hash", now) {
		t.Fatal("an approval approves a plan file it was not given for")
	}

	// A later reject overrides; a reject needs a reason.
	if _, err := decide(db, plan.ID, atoll.DecisionReject, "carol", "", 0); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Fatalf("reject without a reason: %v", err)
	}
	if _, err := decide(db, plan.ID, atoll.DecisionReject, "carol", "wrong region", 0); err != nil {
		t.Fatal(err)
	}
	current, _ = db.PlanDecision(ctx, plan.ID)
	if current.Approves(plan.SHA256, now) || current.Decision != atoll.DecisionReject || current.Reason != "wrong region" {
		t.Fatalf("after reject: %+v", current)
	}
	if approvers, _ := db.PlanApprovers(ctx, f.pullID); len(approvers) != 0 {
		t.Fatalf("rejected plan's approver still counts: %v", approvers)
	}
	history, err := db.PlanApprovals(ctx, plan.ID)
	if err != nil || len(history) != 2 || history[0].Decision != atoll.DecisionReject || history[1].Decision != atoll.DecisionApprove {
		t.Fatalf("history = %+v, %v", history, err)
	}

	// A new plan of the project needs a new approval: the old plan is no
	// longer the latest, and deciding on it writes nothing.
	plan2, err := planFor(t, db, f.pullID, f.projectID)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := db.PlanDecision(ctx, plan2.ID); d != nil {
		t.Fatalf("a new plan inherited a decision: %+v", d)
	}
	beforeD, beforeE := counts(t, db, plan.ID)
	_, err = decide(db, plan.ID, atoll.DecisionApprove, "bob", "", 0)
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "not the latest plan") {
		t.Fatalf("approve an older plan: %v", err)
	}
	if d, e := counts(t, db, plan.ID); d != beforeD || e != beforeE {
		t.Fatalf("a refused approval wrote %d decisions and %d events", d-beforeD, e-beforeE)
	}

	// The author cannot approve their own pull request's plan.
	if _, err := decide(db, plan2.ID, atoll.DecisionApprove, "Alice", "", 0); atoll.ErrorCode(err) != atoll.EFORBIDDEN {
		t.Fatalf("author approves own plan: %v", err)
	}
	if d, _ := db.PlanDecision(ctx, plan2.ID); d != nil {
		t.Fatalf("a refused self-approval was stored: %+v", d)
	}

	// An applied plan cannot be decided on.
	if _, err := decide(db, plan2.ID, atoll.DecisionApprove, "bob", "", 0); err != nil {
		t.Fatal(err)
	}
	if err := markApplied(db, plan2.ID); err != nil {
		t.Fatal(err)
	}
	beforeD, beforeE = counts(t, db, plan2.ID)
	_, err = decide(db, plan2.ID, atoll.DecisionReject, "carol", "too late", 0)
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "already applied") {
		t.Fatalf("reject an applied plan: %v", err)
	}
	if d, e := counts(t, db, plan2.ID); d != beforeD || e != beforeE {
		t.Fatal("a refused decision on an applied plan wrote something")
	}

	// Missing plans and bad decisions.
	if _, err := decide(db, 9999, atoll.DecisionApprove, "bob", "", 0); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("approve a missing plan: %v", err)
	}
	if _, err := decide(db, plan2.ID, "maybe", "bob", "", 0); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Fatalf("bad decision: %v", err)
	}
	if _, err := decide(db, plan2.ID, atoll.DecisionApprove, "", "", 0); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("decision without a user: %v", err)
	}
}

func TestDecidePlanDiscarded(t *testing.T) {
	db := storetest.Open(t)
	f := seed(t, db, 1)
	takeLock(t, db, f.projectID, f.pullID)
	plan, err := planFor(t, db, f.pullID, f.projectID)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ReleaseLocks(atoll.LockSelector{PullID: f.pullID}, "bob", "127.0.0.1", "locks.unlock", "test")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = decide(db, plan.ID, atoll.DecisionApprove, "bob", "", 0)
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "discarded") {
		t.Fatalf("approve a discarded plan: %v", err)
	}
}

func TestFreezeToggle(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	if f, err := db.Freeze(ctx); err != nil || f.On {
		t.Fatalf("initial freeze = %+v, %v", f, err)
	}
	set := func(on bool, reason string) error {
		return db.Update(ctx, func(tx *store.Tx) error {
			_, err := tx.SetFreeze(on, "root", reason, "192.0.2.1")
			return err
		})
	}
	if err := set(true, " "); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Fatalf("freeze without a reason: %v", err)
	}
	if f, _ := db.Freeze(ctx); f.On {
		t.Fatal("a refused freeze was stored")
	}
	if err := set(true, "release week"); err != nil {
		t.Fatal(err)
	}
	f, err := db.Freeze(ctx)
	if err != nil || !f.On || f.By != "root" || f.Reason != "release week" || f.Since.IsZero() {
		t.Fatalf("freeze = %+v, %v", f, err)
	}
	if err := set(false, ""); err != nil {
		t.Fatal(err)
	}
	if f, _ := db.Freeze(ctx); f.On {
		t.Fatal("freeze still on")
	}
	evs, err := db.AuditEvents(ctx, atoll.EventFilter{Action: "freeze"})
	if err != nil || len(evs) != 2 || evs[0].Action != "freeze.off" || evs[1].Action != "freeze.on" || evs[1].Source != "192.0.2.1" {
		t.Fatalf("freeze events = %+v, %v", evs, err)
	}
}

func TestAuditEventsFilterAndPage(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	err := db.Update(ctx, func(tx *store.Tx) error {
		for i := range 25 {
			e := atoll.Event{Actor: "alice", Action: "apply.start", Repo: "acme/infra", Source: "pr-comment"}
			if i%2 == 1 {
				e = atoll.Event{Actor: "bob", Action: "plan.approve", Repo: "acme/web", Source: "10.0.0.1"}
			}
			if err := tx.AddEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    atoll.EventFilter
		want int
	}{
		{"all", atoll.EventFilter{}, 25},
		{"actor", atoll.EventFilter{Actor: "bob"}, 12},
		{"action prefix", atoll.EventFilter{Action: "apply"}, 13},
		{"action exact", atoll.EventFilter{Action: "plan.approve"}, 12},
		{"action is not a LIKE pattern", atoll.EventFilter{Action: "%"}, 0},
		{"repo", atoll.EventFilter{Repo: "acme/web", Actor: "bob"}, 12},
		{"since", atoll.EventFilter{Since: time.Now().Add(time.Hour)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := db.AuditEvents(ctx, tc.f)
			if err != nil || len(evs) != tc.want {
				t.Fatalf("%d events, %v; want %d", len(evs), err, tc.want)
			}
		})
	}
	// Keyset pages: newest first, no overlap, nothing missed.
	seen := map[int64]bool{}
	var before int64
	for page := 0; ; page++ {
		evs, err := db.AuditEvents(ctx, atoll.EventFilter{Limit: 10, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for i, e := range evs {
			if seen[e.ID] || (i > 0 && e.ID >= evs[i-1].ID) {
				t.Fatalf("page %d: event %d repeated or out of order", page, e.ID)
			}
			seen[e.ID] = true
		}
		before = evs[len(evs)-1].ID
	}
	if len(seen) != 25 {
		t.Fatalf("paged %d events, want 25", len(seen))
	}
}

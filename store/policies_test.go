package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

func TestPolicyChecksStoreApproveClear(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atoll.db")
	db := storetest.Open(t, storetest.Path(path))
	f := seed(t, db, 1)
	takeLock(t, db, f.projectID, f.pullID)
	plan, err := planFor(t, db, f.pullID, f.projectID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.PolicyChecks(ctx, plan.ID); err != nil || len(got) != 0 {
		t.Fatalf("unchecked plan: %v, %v", got, err)
	}
	long := strings.Repeat("é", atoll.MaxPolicyOutput) // two bytes each: must be cut
	checks := []atoll.PolicyCheck{
		{PolicySet: "strict", Passed: false, Output: long, ApproveCount: 2},
		{PolicySet: "basics", Passed: true, Output: "1 test, 1 passed", ApproveCount: 1},
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.InsertPolicyChecks(plan.ID, checks) }); err != nil {
		t.Fatal(err)
	}
	strict := checks[0].ID
	approve := func(user string) error {
		return db.Update(ctx, func(tx *store.Tx) error { return tx.ApprovePolicyCheck(strict, user) })
	}
	if err := approve("carol"); err != nil {
		t.Fatal(err)
	}
	if err := approve("CAROL"); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("second approval by the same owner: %v, want ECONFLICT", err)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.ApprovePolicyCheck(9999, "carol") }); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("approval of a missing check: %v, want ENOTFOUND", err)
	}

	// Durable: a reopened database reads the same results.
	db.Close()
	db = storetest.Open(t, storetest.Path(path))
	got, err := db.PolicyChecks(ctx, plan.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].PolicySet != "basics" || got[1].PolicySet != "strict" {
		t.Fatalf("checks = %+v", got)
	}
	s := got[1]
	if s.Passed || s.ApproveCount != 2 || len(s.Approvals) != 1 || s.Approvals[0].User != "carol" || !s.ApprovedBy("Carol") {
		t.Fatalf("strict = %+v", s)
	}
	if len(s.Output) > atoll.MaxPolicyOutput+100 || !strings.Contains(s.Output, "more bytes not kept") || !strings.HasPrefix(s.Output, "éé") {
		t.Fatalf("output not truncated sensibly: %d bytes, tail %q", len(s.Output), s.Output[len(s.Output)-40:])
	}
	if s.Satisfied() || !got[0].Satisfied() || atoll.PoliciesSatisfied(got) {
		t.Fatal("one of two approvals must not satisfy the strict set")
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.ApprovePolicyCheck(strict, "dave") }); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.PolicyChecks(ctx, plan.ID); !atoll.PoliciesSatisfied(got) {
		t.Fatalf("two approvals: %+v", got)
	}
	var cleared int
	if err := db.Update(ctx, func(tx *store.Tx) (err error) { cleared, err = tx.ClearPolicyApprovals(strict); return err }); err != nil || cleared != 2 {
		t.Fatalf("clear: %d, %v", cleared, err)
	}
	if got, _ = db.PolicyChecks(ctx, plan.ID); atoll.PoliciesSatisfied(got) || len(got[1].Approvals) != 0 {
		t.Fatalf("after clear: %+v", got)
	}
}

// A sticky check keeps the approvals of the project's previous check of
// its set on the pull request that cover all its items (and only those,
// with the items and plan they were given on); a non-sticky check keeps
// none. The owner whose approval was kept cannot approve the same check
// again.
func TestStickyPolicyApprovalsKept(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	takeLock(t, db, f.projectID, f.pullID)
	check := func(items []string, sticky bool, approvers ...string) atoll.PolicyCheck {
		t.Helper()
		plan, err := planFor(t, db, f.pullID, f.projectID)
		if err != nil {
			t.Fatal(err)
		}
		checks := []atoll.PolicyCheck{{PolicySet: "strict", Output: strings.Join(items, "\n"), ApproveCount: 2, Sticky: sticky, ItemHashes: items}}
		err = db.Update(ctx, func(tx *store.Tx) error {
			if err := tx.InsertPolicyChecks(plan.ID, checks); err != nil {
				return err
			}
			for _, u := range approvers {
				if err := tx.ApprovePolicyCheck(checks[0].ID, u); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.PolicyChecks(ctx, plan.ID)
		if err != nil || len(got) != 1 {
			t.Fatalf("checks of plan %d: %v, %v", plan.ID, got, err)
		}
		if len(checks[0].Approvals) != len(got[0].Approvals)-len(approvers) {
			t.Fatalf("InsertPolicyChecks set %d kept approvals; the store has %d", len(checks[0].Approvals), len(got[0].Approvals)-len(approvers))
		}
		return got[0]
	}
	users := func(c atoll.PolicyCheck) string {
		var u []string
		for _, a := range c.Approvals {
			u = append(u, fmt.Sprintf("%s@%d", a.User, a.KeptFromPlan))
		}
		return strings.Join(u, " ")
	}
	first := check([]string{"a", "b"}, true, "carol")
	if got := users(first); got != "carol@0" {
		t.Fatalf("first check's approvals: %s", got)
	}
	same := check([]string{"b", "a"}, true, "dave")
	if got := users(same); got != fmt.Sprintf("carol@%d dave@0", first.PlanID) {
		t.Fatalf("same items: approvals %s; want carol's kept from plan %d, and dave's", got, first.PlanID)
	}
	err := db.Update(ctx, func(tx *store.Tx) error { return tx.ApprovePolicyCheck(same.ID, "carol") })
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), fmt.Sprintf("approval of plan #%d covers this output too", first.PlanID)) {
		t.Fatalf("carol approving again: %v", err)
	}
	// Fewer items: both kept, carol's still from the plan she approved.
	fewer := check([]string{"a"}, true)
	if got := users(fewer); got != fmt.Sprintf("carol@%d dave@%d", first.PlanID, same.PlanID) {
		t.Fatalf("fewer items: approvals %s", got)
	}
	if !fewer.Satisfied() {
		t.Fatal("two kept approvals of two needed do not satisfy the set")
	}
	// A new item: none kept.
	if got := users(check([]string{"a", "c"}, true)); got != "" {
		t.Fatalf("a new item: approvals %q kept", got)
	}
	// Not sticky: none kept, even with the same items as an approved check.
	check([]string{"x"}, true, "carol")
	if got := users(check([]string{"x"}, false)); got != "" {
		t.Fatalf("not sticky: approvals %q kept", got)
	}
}

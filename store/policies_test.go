package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

func TestPolicyChecksStoreApproveClear(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atoll.db")
	db := openDB(t, path)
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
	db = openDB(t, path)
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

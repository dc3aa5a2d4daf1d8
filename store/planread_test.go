package store_test

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// Plan reads one plan with its JSON and its state; LatestPlans gives each
// project's newest plan whatever its state, which the pull request page
// explains.
func TestPlanAndLatestPlans(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	var other int64
	var first, second, third *atoll.Plan
	plan := func(tx *store.Tx, project int64, show string) (*atoll.Plan, error) {
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: project, HeadSHA: "abc"}
		if err := tx.InsertJob(j); err != nil {
			return nil, err
		}
		if _, err := tx.TakeLock(project, f.pullID, "alice"); err != nil {
			return nil, err
		}
		p := &atoll.Plan{JobID: j.ID, PullID: f.pullID, ProjectID: project, HeadSHA: "abc", Summary: atoll.Summary{Add: 1}, File: []byte("plan"), ShowJSON: []byte(show)}
		return p, tx.InsertPlan(p)
	}
	err := db.Update(ctx, func(tx *store.Tx) (err error) {
		if other, err = tx.UpsertProject(f.repoID, atoll.Project{Dir: "prod", Workspace: "default"}); err != nil {
			return err
		}
		if first, err = plan(tx, f.projectID, `{"first":true}`); err != nil {
			return err
		}
		if second, err = plan(tx, f.projectID, `{"second":true}`); err != nil { // discards first
			return err
		}
		if third, err = plan(tx, other, `{}`); err != nil {
			return err
		}
		_, err = tx.ReleaseLocks(atoll.LockSelector{PullID: f.pullID, ProjectID: other}, "bob", "test", "lock.delete", "test")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.Plan(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(p.ShowJSON) != `{"first":true}` || p.DiscardedAt == nil || p.AppliedAt != nil || p.PrunedAt != nil || p.File != nil || p.JobID != first.JobID {
		t.Errorf("Plan(first) = %+v, want discarded with its JSON and no file", p)
	}
	if p, err := db.Plan(ctx, second.ID); err != nil || p.DiscardedAt != nil || p.PullID != f.pullID || p.ProjectID != f.projectID {
		t.Errorf("Plan(second) = %+v, %v: want pending", p, err)
	}
	if _, err := db.Plan(ctx, 9999); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("Plan(9999) err = %v, want ENOTFOUND", err)
	}
	latest, err := db.LatestPlans(ctx, f.pullID)
	if err != nil {
		t.Fatal(err)
	}
	if len(latest) != 2 || latest[0].ID != second.ID || latest[1].ID != third.ID {
		t.Fatalf("LatestPlans = %+v, want plans %d and %d", latest, second.ID, third.ID)
	}
	if latest[0].DiscardedAt != nil || latest[1].DiscardedAt == nil || latest[1].ShowJSON != nil {
		t.Errorf("LatestPlans states: %+v %+v, want pending then discarded by the unlock, without JSON", latest[0], latest[1])
	}
}

// A plan told before its JSON is stored with none; StorePlanJSON fills it
// once, and never undoes retention.
func TestStorePlanJSON(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	var p *atoll.Plan
	err := db.Update(ctx, func(tx *store.Tx) error {
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		if _, err := tx.TakeLock(f.projectID, f.pullID, "alice"); err != nil {
			return err
		}
		p = &atoll.Plan{JobID: j.ID, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", Summary: atoll.Summary{Add: 1}, File: []byte("plan")}
		return tx.InsertPlan(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	show := func() string {
		t.Helper()
		got, err := db.Plan(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return string(got.ShowJSON)
	}
	if got := show(); got != "" {
		t.Fatalf("a plan stored without JSON reads %q", got)
	}
	if err := db.StorePlanJSON(ctx, p.ID, nil); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("empty JSON: err %v, want EINVALID", err)
	}
	if err := db.StorePlanJSON(ctx, 9999, []byte(`{}`)); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("no such plan: err %v, want ENOTFOUND", err)
	}
	if err := db.StorePlanJSON(ctx, p.ID, []byte(`{"made":"later"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.StorePlanJSON(ctx, p.ID, []byte(`{"made":"twice"}`)); err != nil {
		t.Fatal(err)
	}
	if got := show(); got != `{"made":"later"}` {
		t.Errorf("JSON %q, want the first one kept", got)
	}
	// A plan pruned before its JSON came stays pruned.
	err = db.Update(ctx, func(tx *store.Tx) error {
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abd"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		p = &atoll.Plan{JobID: j.ID, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abd", File: []byte("plan 2")}
		return tx.InsertPlan(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	// What retention does to a plan (prunePlanBatch).
	if err := db.Update(ctx, func(tx *store.Tx) error {
		return tx.Exec(`UPDATE plans SET file = X'', show_json = X'', pruned_at = 1 WHERE id = ?`, p.ID)
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.StorePlanJSON(ctx, p.ID, []byte(`{"too":"late"}`)); err != nil {
		t.Fatal(err)
	}
	if got := show(); got != "" {
		t.Errorf("a pruned plan got JSON %q", got)
	}
}

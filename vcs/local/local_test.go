package local_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/demo"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/vcs/local"
)

// On a local repository an approval of a pending plan in Atoll is the pull
// request's review: there is nowhere else to review it.
func TestPlanApprovalCountsAsReview(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t, storetest.Path(filepath.Join(dir, "atoll.db")))
	repo, err := demo.Seed(ctx, db, dir, "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	pull, err := db.PullByNumber(ctx, repo.FullName(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var planID int64
	err = db.Update(ctx, func(tx *store.Tx) error {
		proj, err := tx.UpsertProject(repo.ID, atoll.Project{Name: "production", Dir: "production", Workspace: "default"})
		if err != nil {
			return err
		}
		if _, err := tx.TakeLock(proj, pull.ID, pull.Author); err != nil {
			return err
		}
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: pull.ID, ProjectID: proj, HeadSHA: pull.HeadSHA}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		p := &atoll.Plan{JobID: j.ID, PullID: pull.ID, ProjectID: proj, HeadSHA: pull.HeadSHA, File: []byte("plan"), ShowJSON: []byte("{}")}
		err = tx.InsertPlan(p)
		planID = p.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &local.Provider{DB: db}
	approved := func() bool {
		t.Helper()
		d, err := p.GetPull(ctx, *repo, 1)
		if err != nil {
			t.Fatal(err)
		}
		return d.Approved
	}
	decide := func(decision, reason string) {
		t.Helper()
		err := db.Update(ctx, func(tx *store.Tx) error {
			_, err := tx.DecidePlan(atoll.PlanDecision{PlanID: planID, Decision: decision, User: "bob", Reason: reason})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if approved() {
		t.Fatal("approved before anyone approved")
	}
	decide(atoll.DecisionApprove, "")
	if !approved() {
		t.Fatal("a plan approval in Atoll does not count as the local pull request's review")
	}
	decide(atoll.DecisionReject, "no")
	if approved() {
		t.Fatal("a rejected plan's approval still counts as a review")
	}
}

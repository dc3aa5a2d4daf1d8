package store_test

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// An Azure DevOps repository's full name has three segments, its owner
// being ORG/PROJECT: every lookup by full name splits on the last slash.
func TestFullNamesWithMoreThanOneSlash(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	gh := seed(t, db, 1) // acme/infra #1
	var az fixture
	err := db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if az.repoID, err = tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSAzureDevOps, Host: "dev.azure.com", Owner: "org/project", Name: "infra"}); err != nil {
			return err
		}
		if az.pullID, err = tx.UpsertPull(az.repoID, atoll.Pull{Number: 1, HeadSHA: "def", Author: "bob"}); err != nil {
			return err
		}
		if az.projectID, err = tx.UpsertProject(az.repoID, atoll.Project{Dir: ".", Workspace: "default"}); err != nil {
			return err
		}
		return tx.InsertJob(&atoll.Job{Kind: atoll.JobPlan, PullID: az.pullID, ProjectID: az.projectID, HeadSHA: "def"})
	})
	if err != nil {
		t.Fatal(err)
	}
	takeLock(t, db, gh.projectID, gh.pullID)
	takeLock(t, db, az.projectID, az.pullID)

	r, err := db.RepoByName(ctx, "Org/Project/Infra")
	if err != nil || r.ID != az.repoID || r.FullName() != "org/project/infra" {
		t.Fatalf("RepoByName = %+v, %v; want repo %d", r, err, az.repoID)
	}
	p, err := db.PullByNumber(ctx, "org/project/infra", 1)
	if err != nil || p.ID != az.pullID || p.Repo != "org/project/infra" {
		t.Fatalf("PullByNumber = %+v, %v; want pull %d", p, err, az.pullID)
	}
	pulls, err := db.Pulls(ctx, atoll.PullFilter{Repo: "org/project/infra"})
	if err != nil || len(pulls) != 1 || pulls[0].ID != az.pullID {
		t.Fatalf("Pulls = %v, %v; want only pull %d", pulls, err, az.pullID)
	}
	locks, err := db.FilteredLocks(ctx, atoll.LockFilter{Repo: "org/project/infra"})
	if err != nil || len(locks) != 1 || locks[0].Repo != "org/project/infra" {
		t.Fatalf("FilteredLocks = %v, %v; want the Azure repository's lock", locks, err)
	}
	jobs, err := db.Jobs(ctx, atoll.JobFilter{Repo: "org/project/infra"})
	if err != nil || len(jobs) != 1 || jobs[0].PullID != az.pullID {
		t.Fatalf("Jobs = %v, %v; want the Azure pull request's job", jobs, err)
	}
	// The one-slash names still work, and do not reach the Azure repository.
	if p, err := db.PullByNumber(ctx, "acme/infra", 1); err != nil || p.ID != gh.pullID {
		t.Fatalf("PullByNumber(acme/infra) = %+v, %v", p, err)
	}
	for _, bad := range []string{"infra", "org/", "/infra", "org//infra", "/org/infra"} {
		if _, err := db.PullByNumber(ctx, bad, 1); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("PullByNumber(%q) = %v, want EINVALID", bad, err)
		}
	}
}

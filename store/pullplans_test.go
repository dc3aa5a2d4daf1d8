package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// PullOutcomes is the per-project state the aggregate atlantis/apply status
// counts: each project's latest finished job at the head, nothing older.
func TestPullOutcomes(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	projects := map[string]int64{}
	// job runs one job to its final state; a succeeded plan stores a plan
	// with add resources to add.
	job := func(tx *store.Tx, project, kind, sha, state string, add int) error {
		j := &atoll.Job{Kind: kind, PullID: f.pullID, ProjectID: projects[project], HeadSHA: sha}
		if err := tx.InsertJob(j); err != nil || state == atoll.JobQueued {
			return err
		}
		if err := tx.StartJob(j.ID); err != nil || state == atoll.JobRunning {
			return err
		}
		if kind == atoll.JobPlan && state == atoll.JobSucceeded {
			// A plan is stored only under its project's lock.
			if _, err := tx.TakeLock(j.ProjectID, f.pullID, "alice"); err != nil {
				return err
			}
			p := &atoll.Plan{JobID: j.ID, PullID: f.pullID, ProjectID: j.ProjectID, HeadSHA: sha, Summary: atoll.Summary{Add: add}, File: []byte("plan"), ShowJSON: []byte("{}")}
			if err := tx.InsertPlan(p); err != nil {
				return err
			}
		}
		return tx.FinishJob(j.ID, state, "", nil)
	}
	err := db.Update(ctx, func(tx *store.Tx) error {
		for _, dir := range []string{"applied", "planned", "nochange", "planfail", "applyfail", "applying", "old"} {
			id, err := tx.UpsertProject(f.repoID, atoll.Project{Dir: dir, Workspace: "default"})
			if err != nil {
				return err
			}
			projects[dir] = id
		}
		steps := []struct {
			project, kind, sha, state string
			add                       int
		}{
			{"applied", atoll.JobPlan, "old", atoll.JobSucceeded, 1}, // another commit: ignored
			{"applied", atoll.JobPlan, "abc", atoll.JobSucceeded, 1},
			{"applied", atoll.JobApply, "abc", atoll.JobSucceeded, 0},
			{"planned", atoll.JobApply, "abc", atoll.JobFailed, 0}, // then planned again
			{"planned", atoll.JobPlan, "abc", atoll.JobSucceeded, 2},
			{"nochange", atoll.JobPlan, "abc", atoll.JobSucceeded, 0},
			{"planfail", atoll.JobPlan, "abc", atoll.JobFailed, 0},
			{"applyfail", atoll.JobPlan, "abc", atoll.JobSucceeded, 1},
			{"applyfail", atoll.JobApply, "abc", atoll.JobInterrupted, 0},
			{"applying", atoll.JobPlan, "abc", atoll.JobSucceeded, 1},
			{"applying", atoll.JobApply, "abc", atoll.JobRunning, 0}, // not finished: the plan counts
			{"old", atoll.JobPlan, "old", atoll.JobSucceeded, 1},
		}
		for _, s := range steps {
			if err := job(tx, s.project, s.kind, s.sha, s.state, s.add); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.PullOutcomes(ctx, f.pullID, "abc")
	if err != nil {
		t.Fatal(err)
	}
	want := []atoll.ProjectOutcome{
		{ProjectID: projects["applied"], Kind: atoll.JobApply, State: atoll.JobSucceeded},
		{ProjectID: projects["planned"], Kind: atoll.JobPlan, State: atoll.JobSucceeded, Changes: true},
		{ProjectID: projects["nochange"], Kind: atoll.JobPlan, State: atoll.JobSucceeded},
		{ProjectID: projects["planfail"], Kind: atoll.JobPlan, State: atoll.JobFailed},
		{ProjectID: projects["applyfail"], Kind: atoll.JobApply, State: atoll.JobInterrupted},
		{ProjectID: projects["applying"], Kind: atoll.JobPlan, State: atoll.JobSucceeded, Changes: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("PullOutcomes =\n%+v\nwant\n%+v", got, want)
	}
	var applied []bool
	for _, o := range got {
		applied = append(applied, o.Applied())
	}
	if wantApplied := []bool{true, false, true, false, false, false}; !reflect.DeepEqual(applied, wantApplied) {
		t.Fatalf("Applied = %v, want %v", applied, wantApplied)
	}
	if none, err := db.PullOutcomes(ctx, f.pullID, "never-planned"); err != nil || len(none) != 0 {
		t.Fatalf("outcomes of an unplanned commit = %+v, %v", none, err)
	}
}

package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

type fixture struct {
	repoID, pullID, projectID int64
}

func seed(t testing.TB, db *store.DB, number int) fixture {
	t.Helper()
	var f fixture
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		var err error
		if f.repoID, err = tx.UpsertRepo(atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra"}); err != nil {
			return err
		}
		if f.pullID, err = tx.UpsertPull(f.repoID, atoll.Pull{Number: number, HeadSHA: "abc", Author: "alice", URL: "https://x/pull"}); err != nil {
			return err
		}
		f.projectID, err = tx.UpsertProject(f.repoID, atoll.Project{Dir: "staging", Workspace: "default"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestUpsertKeepsKnownFields(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 7)
	// A comment webhook carries only the number: stored metadata must stay.
	err := db.Update(ctx, func(tx *store.Tx) error {
		id, err := tx.UpsertPull(f.repoID, atoll.Pull{Number: 7})
		if id != f.pullID {
			t.Errorf("upsert id = %d, want %d", id, f.pullID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.PullByNumber(ctx, "acme/infra", 7)
	if err != nil {
		t.Fatal(err)
	}
	if p.HeadSHA != "abc" || p.Author != "alice" || p.State != atoll.PullOpen || p.Repo != "acme/infra" {
		t.Fatalf("pull = %+v", p)
	}
	// Nor may a comment on a merged pull request reopen it.
	err = db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.SetPullState(f.pullID, atoll.PullMerged); err != nil {
			return err
		}
		_, err := tx.UpsertPull(f.repoID, atoll.Pull{Number: 7})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := db.PullByNumber(ctx, "acme/infra", 7); p.State != atoll.PullMerged {
		t.Fatalf("state after comment upsert = %s, want merged", p.State)
	}
	if _, err := db.PullByNumber(ctx, "acme/infra", 8); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("missing pull error = %v", err)
	}
}

func TestClaimRequestSerialisesPerPull(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	a, b := seed(t, db, 1), seed(t, db, 2)
	var ids []int64
	err := db.Update(ctx, func(tx *store.Tx) error {
		for _, pull := range []int64{a.pullID, a.pullID, b.pullID} {
			r := &atoll.Request{PullID: pull, Kind: atoll.RequestComment, Comment: "atlantis plan"}
			if err := tx.InsertRequest(r); err != nil {
				return err
			}
			ids = append(ids, r.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	first, err := db.ClaimRequest(ctx, "n1")
	if err != nil || first == nil || first.ID != ids[0] {
		t.Fatalf("first claim = %+v, %v", first, err)
	}
	// The second request of pull 1 must wait for the first; pull 2's may run.
	second, err := db.ClaimRequest(ctx, "n1")
	if err != nil || second == nil || second.ID != ids[2] {
		t.Fatalf("second claim = %+v, %v", second, err)
	}
	if none, err := db.ClaimRequest(ctx, "n1"); err != nil || none != nil {
		t.Fatalf("third claim = %+v, %v", none, err)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.FinishRequest(first.ID, atoll.RequestDone, "") }); err != nil {
		t.Fatal(err)
	}
	third, err := db.ClaimRequest(ctx, "n1")
	if err != nil || third == nil || third.ID != ids[1] {
		t.Fatalf("claim after finish = %+v, %v", third, err)
	}
}

func TestLocksConflictAndRelease(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	a, b := seed(t, db, 1), seed(t, db, 2)
	take := func(pull int64) *atoll.Lock {
		var holder *atoll.Lock
		if err := db.Update(ctx, func(tx *store.Tx) error {
			var err error
			holder, err = tx.TakeLock(a.projectID, pull, "alice")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return holder
	}
	if h := take(a.pullID); h != nil {
		t.Fatalf("first lock conflicted with %+v", h)
	}
	if h := take(a.pullID); h != nil {
		t.Fatalf("relock by holder conflicted with %+v", h)
	}
	h := take(b.pullID)
	if h == nil || h.Pull != 1 || h.Dir != "staging" || h.PullURL != "https://x/pull" {
		t.Fatalf("conflict holder = %+v", h)
	}
	locks, err := db.Locks(ctx)
	if err != nil || len(locks) != 1 {
		t.Fatalf("locks = %v, %v", locks, err)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error {
		released, err := tx.ReleaseLocks(atoll.LockSelector{PullID: a.pullID}, "alice", "pr-comment", "locks.unlock", "test")
		if len(released) != 1 {
			t.Errorf("released %d locks", len(released))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if h := take(b.pullID); h != nil {
		t.Fatalf("lock after release conflicted with %+v", h)
	}
}

func TestPlansApplyOnceAndSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atoll.db")
	db := storetest.Open(t, storetest.Path(path))
	f := seed(t, db, 3)
	job := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", Spec: atoll.JobSpec{ExtraArgs: []string{"-var", "a=b"}}}
	plan := &atoll.Plan{PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", File: []byte("PK\x03\x04plan"), ShowJSON: []byte(`{}`), Summary: atoll.Summary{Add: 2}}
	err := db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertJob(job); err != nil {
			return err
		}
		plan.JobID = job.ID
		if _, err := tx.TakeLock(f.projectID, f.pullID, "alice"); err != nil {
			return err
		}
		if err := tx.InsertPlan(plan); err != nil {
			return err
		}
		return tx.FinishJob(job.ID, atoll.JobSucceeded, "", &plan.Summary)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AppendLogs(ctx, []atoll.LogLine{{JobID: job.ID, Seq: 1, Stream: "stdout", Text: "Plan: 2 to add"}, {JobID: job.ID, Seq: 2, Stream: "stderr", Text: "warn"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = storetest.Open(t, storetest.Path(path))
	got, err := db.Job(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != atoll.JobSucceeded || got.Summary == nil || got.Summary.Add != 2 || got.Spec.ExtraArgs[1] != "a=b" || got.Repo != "acme/infra" {
		t.Fatalf("job after reopen = %+v", got)
	}
	file, err := db.PlanFile(ctx, plan.ID)
	if err != nil || string(file) != "PK\x03\x04plan" {
		t.Fatalf("plan file = %q, %v", file, err)
	}
	lines, err := db.Logs(ctx, job.ID, 2, 0)
	if err != nil || len(lines) != 1 || lines[0].Text != "warn" {
		t.Fatalf("logs from 2 = %+v, %v", lines, err)
	}
	apply := func() error { return db.Update(ctx, func(tx *store.Tx) error { return tx.MarkPlanApplied(plan.ID) }) }
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	if err := apply(); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("second apply error = %v, want conflict", err)
	}
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Update(ctx, func(tx *store.Tx) error {
				if err := tx.InsertRequest(&atoll.Request{PullID: f.pullID, Kind: atoll.RequestAutoplan}); err != nil {
					return err
				}
				if i%2 == 1 {
					return atoll.Errorf(atoll.EINVALID, "odd")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i%2 == 1) != (err != nil) {
			t.Fatalf("update %d error = %v", i, err)
		}
	}
	n, err := db.CountRequests(ctx, atoll.RequestQueued)
	if err != nil || n != 25 {
		t.Fatalf("queued = %d, %v; want 25 (failed updates rolled back)", n, err)
	}
}

func TestRequeueRunningInterruptsJobs(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	req := &atoll.Request{PullID: f.pullID, Kind: atoll.RequestComment}
	running := &atoll.Job{Kind: atoll.JobApply, PullID: f.pullID, ProjectID: f.projectID}
	queued := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID}
	err := db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertRequest(req); err != nil {
			return err
		}
		running.RequestID, queued.RequestID = req.ID, req.ID
		if err := tx.InsertJob(running); err != nil {
			return err
		}
		if err := tx.InsertJob(queued); err != nil {
			return err
		}
		return tx.StartJob(running.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimRequest(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	var interrupted []*atoll.Job
	if err := db.Update(ctx, func(tx *store.Tx) (err error) { interrupted, err = tx.RequeueRunning(); return err }); err != nil {
		t.Fatal(err)
	}
	if len(interrupted) != 1 || interrupted[0].ID != running.ID {
		t.Fatalf("interrupted = %+v", interrupted)
	}
	jobs, err := db.RequestJobs(ctx, req.ID)
	if err != nil || jobs[0].State != atoll.JobInterrupted || jobs[1].State != atoll.JobQueued {
		t.Fatalf("jobs = %+v, %v", jobs, err)
	}
	again, err := db.ClaimRequest(ctx, "n2")
	if err != nil || again == nil || again.ID != req.ID {
		t.Fatalf("reclaim = %+v, %v", again, err)
	}
}

// A plan interrupted by a crash or a failover is planned again (a new job
// of its request); an apply is never run again.
func TestRequeueRunningPlansAgainButNeverApplies(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	req := &atoll.Request{PullID: f.pullID, Kind: atoll.RequestComment}
	var plan, apply *atoll.Job
	err := db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertRequest(req); err != nil {
			return err
		}
		plan = &atoll.Job{Kind: atoll.JobPlan, RequestID: req.ID, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc",
			Spec: atoll.JobSpec{ExtraArgs: []string{"-target=x"}}}
		apply = &atoll.Job{Kind: atoll.JobApply, RequestID: req.ID, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc"}
		for _, j := range []*atoll.Job{plan, apply} {
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			if err := tx.StartJob(j.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { _, err := tx.RequeueRunning(); return err }); err != nil {
		t.Fatal(err)
	}
	jobs, err := db.RequestJobs(ctx, req.ID)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, j := range jobs {
		states = append(states, j.Kind+":"+j.State)
	}
	if want := "plan:interrupted apply:interrupted plan:queued"; strings.Join(states, " ") != want {
		t.Fatalf("jobs after requeue = %v, want %s", states, want)
	}
	if again := jobs[2]; again.HeadSHA != "abc" || again.ProjectID != f.projectID || strings.Join(again.Spec.ExtraArgs, " ") != "-target=x" {
		t.Fatalf("the plan again = %+v", again)
	}
}

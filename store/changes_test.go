package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// openWithChanges opens a database that publishes to a new ChangeService
// and returns a subscription to it.
func openWithChanges(t *testing.T) (*store.DB, <-chan atoll.Change) {
	t.Helper()
	changes := inmem.NewChanges()
	ch, cancel := changes.Subscribe()
	t.Cleanup(cancel)
	db := storetest.Open(t, storetest.Changes(changes))
	return db, ch
}

// drain returns what was published so far (everything is published before
// Update returns).
func drain(ch <-chan atoll.Change) []atoll.Change {
	var out []atoll.Change
	for {
		select {
		case c := <-ch:
			c.Seq = 0 // numbered by the change service (inmem's tests), not the store
			out = append(out, c)
		default:
			return out
		}
	}
}

// A change is published once its transaction is committed: not while fn
// runs, and by the time a subscriber hears of it a read sees the change.
func TestNotifyPublishesAfterCommit(t *testing.T) {
	ctx := context.Background()
	db, ch := openWithChanges(t)
	f := seed(t, db, 7)
	drain(ch)

	seen := make(chan error, 1)
	go func() {
		c := <-ch
		if c.Topic != atoll.TopicJob || c.Repo != "acme/infra" || c.Pull != 7 || c.JobID == 0 {
			seen <- nil
			t.Errorf("published %+v; want the job change of acme/infra#7", c)
			return
		}
		_, err := db.Job(ctx, c.JobID) // read at once, on the read pool
		seen <- err
	}()
	err := db.Update(ctx, func(tx *store.Tx) error {
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond) // a subscriber told too early would read now
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-seen:
		if err != nil {
			t.Fatalf("the subscriber could not read the job it was told of: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change published after the commit")
	}
}

// Callers that fail, and attempts SQLite abandons, publish nothing; callers
// run again after an abandoned attempt publish once.
func TestNotifyOnlyCommittedCallers(t *testing.T) {
	ctx := context.Background()
	db, ch := openWithChanges(t)
	if err := db.Update(ctx, func(tx *store.Tx) error {
		return tx.Exec(`CREATE TRIGGER abort_tx BEFORE INSERT ON events WHEN NEW.action LIKE 'abort%'
			BEGIN SELECT RAISE(ROLLBACK, 'test abort'); END`)
	}); err != nil {
		t.Fatal(err)
	}
	notify := func(name string, then func(*store.Tx) error) store.Call {
		return store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			tx.Notify(atoll.Change{Topic: atoll.TopicLock, Repo: name})
			if err := mark(tx, name); err != nil {
				return err
			}
			if then != nil {
				return then(tx)
			}
			return nil
		}}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	told := db.CommitBatch(
		notify("A", nil),
		notify("D", func(*store.Tx) error { return atoll.Errorf(atoll.EINVALID, "D changed its mind") }),
		notify("E", func(tx *store.Tx) error { return mark(tx, "abort-E") }), // the transaction is lost
		notify("F", nil),
		store.Call{Ctx: cancelled, Fn: func(tx *store.Tx) error {
			tx.Notify(atoll.Change{Topic: atoll.TopicLock, Repo: "cancelled"})
			return nil
		}},
	)
	if told[0] != nil || told[1] == nil || told[2] == nil || told[3] != nil || told[4] == nil {
		t.Fatalf("told %v", told)
	}
	var got []string
	for _, c := range drain(ch) {
		got = append(got, c.Repo)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"A", "F"}) {
		t.Fatalf("published %q; want A and F once each (D failed, E lost the transaction)", got)
	}
	// A failing caller in a transaction that commits.
	told = db.CommitBatch(notify("G", nil), notify("H", func(*store.Tx) error { return atoll.Errorf(atoll.EINVALID, "no") }))
	if told[0] != nil || told[1] == nil {
		t.Fatalf("told %v", told)
	}
	if got := drain(ch); len(got) != 1 || got[0].Repo != "G" {
		t.Fatalf("published %+v; want G only (H failed)", got)
	}
}

// The store's writes of jobs, locks, plans and pull requests notify.
func TestStoreWritesNotify(t *testing.T) {
	ctx := context.Background()
	db, ch := openWithChanges(t)
	f := seed(t, db, 7)
	if got := drain(ch); !slices.Contains(got, atoll.Change{Topic: atoll.TopicPull, Repo: "acme/infra", Pull: 7}) {
		t.Fatalf("upserting a pull request published %+v", got)
	}
	var job *atoll.Job
	var plan *atoll.Plan
	steps := []struct {
		name string
		fn   func(tx *store.Tx) error
		want func() atoll.Change
	}{
		{"insert job", func(tx *store.Tx) error {
			job = &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc"}
			return tx.InsertJob(job)
		}, func() atoll.Change {
			return atoll.Change{Topic: atoll.TopicJob, Repo: "acme/infra", Pull: 7, JobID: job.ID}
		}},
		{"start job", func(tx *store.Tx) error { return tx.StartJob(job.ID) },
			func() atoll.Change {
				return atoll.Change{Topic: atoll.TopicJob, Repo: "acme/infra", Pull: 7, JobID: job.ID}
			}},
		{"take lock", func(tx *store.Tx) error { _, err := tx.TakeLock(f.projectID, f.pullID, "alice"); return err },
			func() atoll.Change { return atoll.Change{Topic: atoll.TopicLock, Repo: "acme/infra", Pull: 7} }},
		{"insert plan", func(tx *store.Tx) error {
			plan = &atoll.Plan{JobID: job.ID, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", File: []byte("p"), ShowJSON: []byte("{}")}
			return tx.InsertPlan(plan)
		}, func() atoll.Change {
			return atoll.Change{Topic: atoll.TopicPlan, Repo: "acme/infra", Pull: 7, JobID: job.ID}
		}},
		{"approve plan", func(tx *store.Tx) error {
			_, err := tx.DecidePlan(atoll.PlanDecision{PlanID: plan.ID, Decision: atoll.DecisionApprove, User: "carol", Source: "test"})
			return err
		}, func() atoll.Change { return atoll.Change{Topic: atoll.TopicApproval, Repo: "acme/infra", Pull: 7} }},
		{"freeze", func(tx *store.Tx) error { _, err := tx.SetFreeze(true, "carol", "release week", "test"); return err },
			func() atoll.Change { return atoll.Change{Topic: atoll.TopicFreeze} }},
		{"finish job", func(tx *store.Tx) error { return tx.FinishJob(job.ID, atoll.JobSucceeded, "", nil) },
			func() atoll.Change {
				return atoll.Change{Topic: atoll.TopicJob, Repo: "acme/infra", Pull: 7, JobID: job.ID}
			}},
		{"release locks", func(tx *store.Tx) error {
			_, err := tx.ReleaseLocks(atoll.LockSelector{PullID: f.pullID}, "alice", "test", "unlock", "test")
			return err
		}, func() atoll.Change { return atoll.Change{Topic: atoll.TopicLock, Repo: "acme/infra", Pull: 7} }},
		{"close pull", func(tx *store.Tx) error { return tx.SetPullState(f.pullID, atoll.PullClosed) },
			func() atoll.Change { return atoll.Change{Topic: atoll.TopicPull, Repo: "acme/infra", Pull: 7} }},
	}
	for _, st := range steps {
		if err := db.Update(ctx, st.fn); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got, want := drain(ch), st.want(); !slices.Contains(got, want) {
			t.Errorf("%s published %+v; want %+v among them", st.name, got, want)
		}
	}
}

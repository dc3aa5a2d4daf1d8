package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// historyFixture is a database with jobs spread over two repositories,
// pull requests, projects, users, kinds, states and days.
type historyFixture struct {
	db  *store.DB
	all []*atoll.Job // newest first
}

func newHistoryFixture(t testing.TB, n int) *historyFixture {
	t.Helper()
	db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	h := &historyFixture{db: db}
	var pulls [2][2]int64    // [repo][pull]
	var projects [2][2]int64 // [repo][project]
	update(t, db, func(tx *store.Tx) error {
		for r, name := range []string{"infra", "apps"} {
			repo, err := tx.UpsertRepo(atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: name})
			if err != nil {
				return err
			}
			for i := range 2 {
				if pulls[r][i], err = tx.UpsertPull(repo, atoll.Pull{Number: 7 + i, HeadSHA: "abc"}); err != nil {
					return err
				}
				p := atoll.Project{Dir: []string{"staging", "production"}[i], Workspace: "default"}
				if i == 1 {
					p.Name = "prod"
				}
				if projects[r][i], err = tx.UpsertProject(repo, p); err != nil {
					return err
				}
			}
		}
		return nil
	})
	states := []string{atoll.JobSucceeded, atoll.JobFailed, atoll.JobRunning, atoll.JobQueued}
	for i := range n {
		c.Set(epoch.Add(time.Duration(i) * 6 * time.Hour)) // four a day
		j := &atoll.Job{Kind: []string{atoll.JobPlan, atoll.JobApply}[i%2], PullID: pulls[i%2][(i/2)%2],
			ProjectID: projects[i%2][(i/3)%2], HeadSHA: "abc", User: []string{"alice", "bob", "carol"}[i%3]}
		update(t, db, func(tx *store.Tx) error {
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			switch st := states[i%4]; st {
			case atoll.JobQueued:
				return nil
			case atoll.JobRunning:
				return tx.StartJob(j.ID)
			default:
				if err := tx.StartJob(j.ID); err != nil {
					return err
				}
				return tx.FinishJob(j.ID, st, "", nil)
			}
		})
	}
	all, err := db.Jobs(context.Background(), atoll.JobFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("%d jobs, want %d", len(all), n)
	}
	h.all = all
	return h
}

func ids(jobs []*atoll.Job) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// Walking the history page by page, older then back newer, visits every
// job exactly once each way, in id order, with the right links.
func TestJobHistoryPagesCoverEveryJobOnce(t *testing.T) {
	ctx := context.Background()
	h := newHistoryFixture(t, 137)
	for _, filter := range []atoll.JobFilter{{}, {User: "bob"}, {Repo: "acme/apps", Kind: atoll.JobApply}} {
		t.Run(fmt.Sprintf("%+v", filter), func(t *testing.T) {
			var want []int64
			for _, j := range h.all {
				if (filter.User == "" || j.User == filter.User) && (filter.Repo == "" || j.Repo == filter.Repo) && (filter.Kind == "" || j.Kind == filter.Kind) {
					want = append(want, j.ID)
				}
			}
			f := filter
			f.Limit = 10
			var got []int64
			pages := 0
			for {
				page, err := h.db.JobHistory(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if page.Newer != (pages > 1) {
					t.Errorf("page %d: Newer = %v", pages, page.Newer)
				}
				got = append(got, ids(page.Jobs)...)
				if !page.Older {
					break
				}
				f.Before = page.Jobs[len(page.Jobs)-1].ID
			}
			if !slices.Equal(got, want) {
				t.Fatalf("older pages gave %v\nwant %v", got, want)
			}
			if wantPages := (len(want) + 9) / 10; pages != wantPages {
				t.Errorf("%d pages, want %d", pages, wantPages)
			}
			// And back up with After from the oldest job.
			f.Before, f.After = 0, want[len(want)-1]
			back := []int64{want[len(want)-1]}
			for {
				page, err := h.db.JobHistory(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				if !page.Older {
					t.Errorf("after %d: Older = false", f.After)
				}
				back = append(ids(page.Jobs), back...)
				if !page.Newer {
					break
				}
				f.After = page.Jobs[0].ID
			}
			if !slices.Equal(back, want) {
				t.Fatalf("newer pages gave %v\nwant %v", back, want)
			}
		})
	}
}

func TestJobHistoryFilters(t *testing.T) {
	ctx := context.Background()
	h := newHistoryFixture(t, 40)
	day := func(d int) time.Time { return epoch.Add(time.Duration(d) * 24 * time.Hour) }
	cases := []struct {
		name string
		f    atoll.JobFilter
		keep func(*atoll.Job) bool
	}{
		{"repo", atoll.JobFilter{Repo: "ACME/infra"}, func(j *atoll.Job) bool { return j.Repo == "acme/infra" }},
		{"pull", atoll.JobFilter{Pull: 8}, func(j *atoll.Job) bool { return j.Pull == 8 }},
		{"repo and pull", atoll.JobFilter{Repo: "acme/apps", Pull: 7}, func(j *atoll.Job) bool { return j.Repo == "acme/apps" && j.Pull == 7 }},
		{"project by name", atoll.JobFilter{Project: "prod"}, func(j *atoll.Job) bool { return j.Project == "prod" }},
		{"project by dir", atoll.JobFilter{Project: "staging"}, func(j *atoll.Job) bool { return j.Dir == "staging" }},
		{"project of a repo", atoll.JobFilter{Repo: "acme/apps", Project: "prod"}, func(j *atoll.Job) bool { return j.Repo == "acme/apps" && j.Project == "prod" }},
		{"kind", atoll.JobFilter{Kind: atoll.JobApply}, func(j *atoll.Job) bool { return j.Kind == atoll.JobApply }},
		{"state", atoll.JobFilter{State: atoll.JobFailed}, func(j *atoll.Job) bool { return j.State == atoll.JobFailed }},
		{"user", atoll.JobFilter{User: "carol"}, func(j *atoll.Job) bool { return j.User == "carol" }},
		{"from", atoll.JobFilter{From: day(3)}, func(j *atoll.Job) bool { return !j.CreatedAt.Before(day(3)) }},
		{"to", atoll.JobFilter{To: day(2)}, func(j *atoll.Job) bool { return j.CreatedAt.Before(day(2)) }},
		{"one day", atoll.JobFilter{From: day(5), To: day(6)}, func(j *atoll.Job) bool { return !j.CreatedAt.Before(day(5)) && j.CreatedAt.Before(day(6)) }},
		{"all together", atoll.JobFilter{Repo: "acme/infra", User: "alice", Kind: atoll.JobPlan, From: day(1)},
			func(j *atoll.Job) bool {
				return j.Repo == "acme/infra" && j.User == "alice" && j.Kind == atoll.JobPlan && !j.CreatedAt.Before(day(1))
			}},
		{"nothing", atoll.JobFilter{User: "mallory"}, func(*atoll.Job) bool { return false }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []int64
			for _, j := range h.all {
				if c.keep(j) {
					want = append(want, j.ID)
				}
			}
			if c.name != "nothing" && (len(want) == 0 || len(want) == len(h.all)) {
				t.Fatalf("the fixture does not exercise this filter: %d of %d jobs match", len(want), len(h.all))
			}
			page, err := h.db.JobHistory(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(page.Jobs); !slices.Equal(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}
	if _, err := h.db.JobHistory(ctx, atoll.JobFilter{Repo: "nope"}); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("repo without owner: err = %v, want invalid", err)
	}
	if _, err := h.db.JobHistory(ctx, atoll.JobFilter{Before: 5, After: 2}); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("before and after: err = %v, want invalid", err)
	}
}

// Each filter of the history walks an index in id order: no query sorts
// the jobs it found (USE TEMP B-TREE FOR ORDER BY) or scans them all.
func TestJobHistoryQueryPlans(t *testing.T) {
	ctx := context.Background()
	h := newHistoryFixture(t, 8)
	cases := []struct {
		f    atoll.JobFilter
		want string
	}{
		{atoll.JobFilter{}, "SCAN j"},
		{atoll.JobFilter{Before: 5}, "SEARCH j USING INTEGER PRIMARY KEY (rowid<?)"},
		{atoll.JobFilter{User: "alice"}, "USING INDEX jobs_user (user=?)"},
		{atoll.JobFilter{User: "alice", Before: 5}, "USING INDEX jobs_user (user=? AND id<?)"},
		{atoll.JobFilter{Repo: "acme/apps", Project: "prod", Before: 5}, "USING INDEX jobs_project (project_id=? AND id<?)"},
		{atoll.JobFilter{Repo: "acme/apps", Before: 5}, "SEARCH j USING INTEGER PRIMARY KEY (rowid<?)"},
		{atoll.JobFilter{Repo: "acme/infra", Pull: 7, Before: 5}, "USING INDEX jobs_pull (pull_id=? AND id<?)"},
		{atoll.JobFilter{State: "failed", Before: 5}, "USING INDEX jobs_state (state=? AND rowid<?)"},
		{atoll.JobFilter{From: epoch, To: epoch.Add(time.Hour), Before: 5}, "SEARCH j USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
		{atoll.JobFilter{From: epoch, User: "bob"}, "USING INDEX jobs_user (user=? AND id>?)"},
	}
	for _, c := range cases {
		plan, err := h.db.ExplainJobHistory(ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v:\n%s", c.f, plan)
		if !strings.Contains(plan, c.want) {
			t.Errorf("%+v: plan does not contain %q:\n%s", c.f, c.want, plan)
		}
		if strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%+v: the plan sorts:\n%s", c.f, plan)
		}
	}
}

package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/web"
)

const (
	oldHead = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	newHead = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// pullFixture is a local pull request (#7 of acme/infra, head newHead)
// whose projects stand in every state the page explains, served by a real
// database and an unstarted runner, so that queued requests stay queued.
type pullFixture struct {
	db       *store.DB
	srv      *web.Server
	h        http.Handler
	pullID   int64
	projects map[string]int64 // by dir
	plans    map[string]int64 // latest plan by dir
	jobs     map[string]int64 // latest job by dir
	locks    map[string]int64 // lock by dir
}

func newPullFixture(t *testing.T) *pullFixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	db.Changes = inmem.NewChanges() // the page's live sections follow it
	f := &pullFixture{db: db, projects: map[string]int64{}, plans: map[string]int64{}, jobs: map[string]int64{}, locks: map[string]int64{}}
	err := db.Update(ctx, func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "acme", Name: "infra"})
		if err != nil {
			return err
		}
		if f.pullID, err = tx.UpsertPull(repoID, atoll.Pull{Number: 7, Title: "Buckets", Author: "alice", HeadSHA: oldHead, State: atoll.PullOpen}); err != nil {
			return err
		}
		for _, p := range []atoll.Project{
			{Name: "ready", Dir: "ready", Workspace: "default"},
			{Dir: "stale", Workspace: "default"},
			{Dir: "applied", Workspace: "default"},
			{Dir: "unlocked", Workspace: "default"},
			{Dir: "failed", Workspace: "default"},
			{Dir: "never", Workspace: "default"},
			{Dir: "planning", Workspace: "staging"},
			// Names the comment grammar must quote, or cannot hold.
			{Name: "o'brien", Dir: "quoted", Workspace: "default"},
			{Name: "has space", Dir: "spaced", Workspace: "default"},
		} {
			if f.projects[p.Dir], err = tx.UpsertProject(repoID, p); err != nil {
				return err
			}
		}
		// job runs a job of dir to state at sha; a succeeded plan is
		// stored under the project's lock.
		job := func(dir, kind, state, sha, msg string) error {
			j := &atoll.Job{Kind: kind, PullID: f.pullID, ProjectID: f.projects[dir], HeadSHA: sha, User: "alice"}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			f.jobs[dir] = j.ID
			if state == atoll.JobQueued {
				return nil
			}
			if err := tx.StartJob(j.ID); err != nil || state == atoll.JobRunning {
				return err
			}
			sum := &atoll.Summary{Add: 1, Change: 2, Destroy: 3}
			if kind == atoll.JobPlan && state == atoll.JobSucceeded {
				if _, err := tx.TakeLock(j.ProjectID, f.pullID, "alice"); err != nil {
					return err
				}
				p := &atoll.Plan{JobID: j.ID, PullID: f.pullID, ProjectID: j.ProjectID, HeadSHA: sha, Summary: *sum, File: []byte("plan " + dir), ShowJSON: []byte("{}")}
				if err := tx.InsertPlan(p); err != nil {
					return err
				}
				f.plans[dir] = p.ID
			}
			return tx.FinishJob(j.ID, state, msg, sum)
		}
		steps := []struct{ dir, kind, state, sha, msg string }{
			{"ready", atoll.JobPlan, atoll.JobSucceeded, newHead, ""},
			{"stale", atoll.JobPlan, atoll.JobSucceeded, oldHead, ""},
			{"applied", atoll.JobPlan, atoll.JobSucceeded, newHead, ""},
			{"unlocked", atoll.JobPlan, atoll.JobSucceeded, newHead, ""},
			{"failed", atoll.JobPlan, atoll.JobSucceeded, newHead, ""},
			{"failed", atoll.JobPlan, atoll.JobFailed, newHead, "Error: Unsupported argument\nmore detail"},
			{"never", atoll.JobApply, atoll.JobFailed, newHead, "nothing to apply"},
			{"planning", atoll.JobPlan, atoll.JobRunning, newHead, ""},
			{"quoted", atoll.JobPlan, atoll.JobFailed, newHead, ""},
			{"spaced", atoll.JobPlan, atoll.JobFailed, newHead, ""},
		}
		for _, s := range steps {
			if err := job(s.dir, s.kind, s.state, s.sha, s.msg); err != nil {
				return err
			}
		}
		if err := tx.MarkPlanApplied(f.plans["applied"]); err != nil {
			return err
		}
		if _, err := tx.ReleaseLocks(atoll.LockSelector{PullID: f.pullID, ProjectID: f.projects["unlocked"]}, "bob", "test", "lock.delete", "test"); err != nil {
			return err
		}
		// The head moves on; "stale" keeps the plan of the old head.
		_, err = tx.UpsertPull(repoID, atoll.Pull{Number: 7, HeadSHA: newHead})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	locks, err := db.PullLocks(ctx, f.pullID)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locks {
		f.locks[l.Dir] = l.ID
	}
	s := &web.Server{DB: db, Changes: db.Changes, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	withRunner(s, &runner.Runner{
		DB:     db,
		Hub:    runner.NewHub(),
		Config: runner.Config{Allowlist: runner.ParseAllowlist("*")},
	})
	f.srv, f.h = s, s.Handler()
	return f
}

var (
	alice = &atoll.User{Name: "alice", Role: atoll.RoleOperator}
	vera  = &atoll.User{Name: "vera", Role: atoll.RoleViewer}
)

// do serves one request as user (nil: nobody signed in).
func (f *pullFixture) do(t *testing.T, method, path, contentType, body string, user *atoll.User, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if user != nil {
		req = req.WithContext(atoll.NewContextWithUser(req.Context(), user))
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

// row cuts a project's row out of the pull request page.
func row(t *testing.T, page string, projectID int64) string {
	t.Helper()
	start := strings.Index(page, `<article class="card project" id="project-`+itoa(projectID)+`"`)
	if start < 0 {
		t.Fatalf("page has no row for project %d", projectID)
	}
	end := strings.Index(page[start:], "</article>")
	return page[start : start+end]
}

// queued lists the comments of the requests queued so far, in order.
func (f *pullFixture) queued(t *testing.T) []*atoll.Request {
	t.Helper()
	var out []*atoll.Request
	for id := int64(1); ; id++ {
		q, err := f.db.Request(context.Background(), id)
		if atoll.ErrorCode(err) == atoll.ENOTFOUND {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
}

// closePull closes pull as its close webhook would: the state, then its
// locks released and plans discarded.
func closePull(ctx context.Context, f *pullFixture, pull *atoll.Pull) error {
	return f.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := tx.UpsertPull(pull.RepoID, atoll.Pull{Number: pull.Number, State: atoll.PullClosed}); err != nil {
			return err
		}
		_, err := tx.ReleaseLocks(atoll.LockSelector{PullID: pull.ID}, "alice", "test", "locks.release", "pull request closed")
		return err
	})
}

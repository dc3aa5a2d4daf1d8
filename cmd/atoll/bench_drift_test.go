package main_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/store"
)

// benchDriftProjects is ATOLL_BENCH_DRIFT_PROJECTS, else 500.
func benchDriftProjects(b *testing.B) int {
	n := 500
	if v := os.Getenv("ATOLL_BENCH_DRIFT_PROJECTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("ATOLL_BENCH_DRIFT_PROJECTS=%q", v)
		}
	}
	return n
}

// BenchmarkDriftBacklogPRLatency: a repository of N tiny terraform_data
// projects (ATOLL_BENCH_DRIFT_PROJECTS, default 500) with a drift backlog
// queued, then pull requests opened one at a time (ATOLL_BENCH_DRIFT_PULLS,
// default 10), each changing its own project. Two backlogs:
//
//   - per-project: one drift check per project (N drift requests of main)
//     on a server with --parallelism 1, so the only worker is always busy
//     with the backlog and each pull request waits for the check in flight:
//     this is what tests the claim order (pull requests before drift);
//   - one-check: one drift check of all N projects (one request, holding
//     one scheduler slot while its N plans run, up to --parallelism at
//     once) on a server with --parallelism 2: the second worker is free,
//     so a pull request should start at once.
//
// For each pull request the benchmark reads its request from the store:
//
//   - worker-free-to-start: the request's started_at minus the moment a
//     worker was free for it, max(its created_at, the latest finished_at
//     of any request finished by its started_at) — the target is ≤ 1 s;
//   - queued-to-start: started_at minus created_at (includes the drift
//     check in flight when the webhook came);
//   - drift-ahead: the drift requests that started between the pull
//     request's created_at and started_at, i.e. ran ahead of it (want 0).
func BenchmarkDriftBacklogPRLatency(b *testing.B) {
	b.Run("backlog=per-project", func(b *testing.B) { driftBacklog(b, true, 1) })
	b.Run("backlog=one-check", func(b *testing.B) { driftBacklog(b, false, 2) })
}

func driftBacklog(b *testing.B, perProject bool, parallelism int) {
	testEnv(b)
	projects := benchDriftProjects(b)
	pulls := 10
	if v := os.Getenv("ATOLL_BENCH_DRIFT_PULLS"); v != "" {
		pulls, _ = strconv.Atoi(v)
	}
	if pulls > projects {
		pulls = projects
	}
	ctx := context.Background()
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		repo, base, gh, shas := manyPulls(b, pulls, projects)
		cloneURL, _ := serveGit(b, repo, "gh-test-token")
		m := startMain(b, b.TempDir(), func(c *main.Config) {
			c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, gh.URL+"/"
			c.RepoAllowlist = "github.com/acme/*"
			c.Parallelism = parallelism
			c.LogLevel = "error"
		})
		r := atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra", CloneURL: cloneURL}
		var drifts []int64
		queue := func(names ...string) {
			req, err := m.Runner.CheckDrift(ctx, atoll.DriftCheck{Repo: r, Branch: "main", Projects: names, User: "bench", Source: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			drifts = append(drifts, req.ID)
		}
		if perProject {
			for i := 0; i < projects; i++ {
				queue(fmt.Sprintf("p%d", i))
			}
			// The backlog is running: the first drift check has finished.
			eventually(b, 2*time.Minute, "the first drift check done", func() bool {
				q, err := m.DB.Request(ctx, drifts[0])
				return err == nil && q.State == atoll.RequestDone
			})
		} else {
			queue()
			// The check is running: its first plans have finished.
			eventually(b, 2*time.Minute, "the drift check's first plans done", func() bool {
				jobs, err := m.DB.RequestJobs(ctx, drifts[0])
				done := 0
				for _, j := range jobs {
					if j.State == atoll.JobSucceeded {
						done++
					}
				}
				return err == nil && done >= parallelism
			})
		}
		b.StartTimer()
		var prReqs []int64
		for i := 0; i < pulls; i++ {
			n := i + 1
			webhook(b, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, n, "opened", fmt.Sprintf("b%d", i), shas[i], base))
			deadline := time.Now().Add(2 * time.Minute)
			for len(gh.pullComments(n)) == 0 {
				if time.Now().After(deadline) {
					b.Fatalf("pull %d: no plan comment", n)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if c := gh.pullComments(n)[0]; !contains(c, "Plan: 2 to add") {
				b.Fatalf("pull %d commented:\n%s", n, c)
			}
			pr, err := m.DB.PullByNumber(ctx, "acme/infra", n)
			if err != nil {
				b.Fatal(err)
			}
			jobs, err := m.DB.PullJobs(ctx, pr.ID)
			if err != nil || len(jobs) == 0 || jobs[0].RequestID == 0 {
				b.Fatalf("pull %d jobs %v, %v", n, jobs, err)
			}
			prReqs = append(prReqs, jobs[0].RequestID)
		}
		b.StopTimer()
		// Every request the benchmark knows of, as the store has them now.
		all := map[int64]*atoll.Request{}
		for _, id := range append(append([]int64(nil), drifts...), prReqs...) {
			q, err := m.DB.Request(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			all[id] = q
		}
		var free, queued []time.Duration
		ahead, driftDone := 0, 0
		for _, id := range drifts {
			if all[id].State == atoll.RequestDone {
				driftDone++
			}
		}
		for _, id := range prReqs {
			q := all[id]
			if q.StartedAt == nil {
				b.Fatalf("request %d never started", id)
			}
			start, freed := *q.StartedAt, q.CreatedAt
			for _, o := range all {
				if o.ID != id && o.FinishedAt != nil && !o.FinishedAt.After(start) && o.FinishedAt.After(freed) {
					freed = *o.FinishedAt
				}
				if o.Kind == atoll.RequestDrift && o.StartedAt != nil && o.StartedAt.After(q.CreatedAt) && o.StartedAt.Before(start) {
					ahead++
				}
			}
			free = append(free, start.Sub(freed))
			queued = append(queued, start.Sub(q.CreatedAt))
		}
		report(b, "worker-free-to-start", free)
		b.ReportMetric(float64(maxDuration(free).Microseconds())/1000, "worker-free-to-start-max-ms")
		report(b, "queued-to-start", queued)
		b.ReportMetric(float64(ahead), "drift-ahead")
		b.ReportMetric(float64(driftDone), "drift-requests-done")
		b.ReportMetric(float64(len(drifts)), "drift-requests-queued")
		// The checks that ran did check (a check that fails at once would
		// leave the worker free and measure nothing).
		states, err := m.DB.DriftProjects(ctx, atoll.DriftFilter{Repo: "acme/infra"})
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range states {
			if d.State != atoll.DriftDrifted || d.Add != 1 {
				b.Fatalf("drift of %s: %+v", d.Dir, *d)
			}
		}
		if !perProject {
			// The one check was still running its plans all along.
			jobs, err := m.DB.RequestJobs(ctx, drifts[0])
			if err != nil {
				b.Fatal(err)
			}
			done := 0
			for _, j := range jobs {
				if j.State == atoll.JobSucceeded {
					done++
				} else if j.State == atoll.JobFailed {
					b.Fatalf("drift job %d failed: %s", j.ID, j.Error)
				}
			}
			b.ReportMetric(float64(done), "drift-plans-done")
		}
		if ahead > 0 {
			b.Errorf("%d drift checks started ahead of a queued pull request", ahead)
		}
		m.Close()
	}
}

func maxDuration(d []time.Duration) time.Duration {
	var m time.Duration
	for _, x := range d {
		m = max(m, x)
	}
	return m
}

// BenchmarkDriftPage renders the Drift page over HTTP through the server
// (Main, real SQLite) with N projects' drift states (N =
// ATOLL_BENCH_DRIFT_PROJECTS, default 500) and 100 checks of each in
// drift_checks (50,000 rows at 500 projects), recorded through the store
// (QueueDrift, a finished plan job per project, RecordDrift) before the
// server starts. It reports p50/p90/max of GET /drift (every project) and
// GET /drift?repo=acme/infra&state=drifted; the target is ≤ 50 ms. The
// page has no per-project history here, so history-query times the store's
// DriftHistory (a project's last 50 checks) alone.
func BenchmarkDriftPage(b *testing.B) {
	testEnv(b)
	projects := benchDriftProjects(b)
	const checks = 100
	ctx := context.Background()
	dataDir := b.TempDir()
	db := store.NewDB(filepath.Join(dataDir, "atoll.db"))
	if err := db.Open(ctx); err != nil {
		b.Fatal(err)
	}
	repo := atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra"}
	var repoID int64
	ids := make([]int64, projects)
	if err := db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if repoID, err = tx.UpsertRepo(repo); err != nil {
			return err
		}
		for i := range ids {
			if ids[i], err = tx.UpsertProject(repoID, atoll.Project{Dir: fmt.Sprintf("p%d", i), Workspace: "default"}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	setup := time.Now()
	for c := 0; c < checks; c++ {
		req, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: repo, Branch: "main", User: "bench", Source: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		results := make([]atoll.DriftResult, projects)
		if err := db.Update(ctx, func(tx *store.Tx) error {
			for i, id := range ids {
				res := atoll.DriftResult{ProjectID: id, State: atoll.DriftInSync}
				switch (i + c) % 10 {
				case 0:
					res.State, res.Change, res.ChangedOutside = atoll.DriftDrifted, 1+i%3, true
				case 1:
					res.State, res.Error = atoll.DriftFailed, "Error: no credentials"
				}
				job := &atoll.Job{Kind: atoll.JobPlan, RequestID: req.ID, PullID: req.PullID, ProjectID: id, HeadSHA: "fedcba9876543210", User: "bench", Spec: atoll.JobSpec{Drift: true}}
				if err := tx.InsertJob(job); err != nil {
					return err
				}
				if err := tx.StartJob(job.ID); err != nil {
					return err
				}
				if err := tx.FinishJob(job.ID, atoll.JobSucceeded, "", &atoll.Summary{Change: res.Change}); err != nil {
					return err
				}
				res.JobID = job.ID
				results[i] = res
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if err := db.RecordDrift(ctx, req.ID, results, nil); err != nil {
			b.Fatal(err)
		}
		if err := db.FinishRequest(ctx, req.ID, atoll.RequestDone, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d projects, %d drift checks recorded in %v", projects, projects*checks, time.Since(setup).Round(time.Millisecond))
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	gh := newFakeGitHub(b)
	m := startMain(b, dataDir, func(c *main.Config) {
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		c.LogLevel = "error"
	})
	b.Cleanup(func() { m.Close() })
	get := func(url string) time.Duration {
		t0 := time.Now()
		resp, err := authClient.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if resp.StatusCode != http.StatusOK || !contains(string(body), "p1") {
			b.Fatalf("GET %s: %d, %d bytes", url, resp.StatusCode, len(body))
		}
		return d
	}
	for _, page := range []struct{ name, path string }{
		{"all", "/drift"},
		{"repo-drifted", "/drift?repo=acme/infra&state=drifted"},
	} {
		b.Run(page.name, func(b *testing.B) {
			get(m.URL + page.path) // warm
			lat := make([]time.Duration, b.N)
			b.ResetTimer()
			for i := range lat {
				lat[i] = get(m.URL + page.path)
			}
			b.StopTimer()
			report(b, "page", lat)
			s := append([]time.Duration(nil), lat...)
			sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
			b.ReportMetric(float64(s[len(s)-1].Microseconds())/1000, "page-max-ms")
		})
	}
	// This branch's page shows no project history; the store's history
	// query (a project's last 50 checks of its 100) is what one would read.
	b.Run("history-query", func(b *testing.B) {
		lat := make([]time.Duration, b.N)
		for i := range lat {
			t0 := time.Now()
			h, err := m.DB.DriftHistory(ctx, ids[i%len(ids)], "main", 50)
			lat[i] = time.Since(t0)
			if err != nil || len(h) != 50 {
				b.Fatalf("history: %d, %v", len(h), err)
			}
		}
		report(b, "query", lat)
		b.ReportMetric(float64(maxDuration(lat).Microseconds())/1000, "query-max-ms")
	})
}

package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// BenchmarkJobHistory pages through 100,000 jobs (10 repositories of 10
// pull requests, 5 users): the first page and a page deep in the history,
// unfiltered and with each kind of filter. Figures in docs/performance.md.
//
//	go test -run '^$' -bench BenchmarkJobHistory -benchtime 200x ./store
func BenchmarkJobHistory(b *testing.B) {
	ctx := context.Background()
	db, _ := openClocked(b, filepath.Join(b.TempDir(), "atoll.db"))
	const jobs = 100_000
	var pulls, projects []int64
	update(b, db, func(tx *store.Tx) error {
		for r := range 10 {
			repo, err := tx.UpsertRepo(atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: fmt.Sprint("repo", r)})
			if err != nil {
				return err
			}
			for p := range 10 {
				id, err := tx.UpsertPull(repo, atoll.Pull{Number: p + 1, HeadSHA: "abc"})
				if err != nil {
					return err
				}
				pulls = append(pulls, id)
				if id, err = tx.UpsertProject(repo, atoll.Project{Dir: fmt.Sprint("dir", p), Workspace: "default"}); err != nil {
					return err
				}
				projects = append(projects, id)
			}
		}
		return nil
	})
	for start := 0; start < jobs; start += 5000 {
		update(b, db, func(tx *store.Tx) error {
			for i := start; i < start+5000; i++ {
				k := (i * 7919) % len(pulls) // spread each pull request's jobs over the history
				j := &atoll.Job{Kind: []string{atoll.JobPlan, atoll.JobApply}[i%2], PullID: pulls[k], ProjectID: projects[k],
					HeadSHA: "abc", User: fmt.Sprint("user", i%5)}
				if err := tx.InsertJob(j); err != nil {
					return err
				}
			}
			return nil
		})
	}
	deep := int64(1000) // near the oldest: page ~1,980 of 50 jobs, counted from the newest
	cases := []struct {
		name string
		f    atoll.JobFilter
	}{
		{"first page", atoll.JobFilter{}},
		{"deep page", atoll.JobFilter{Before: deep}},
		{"user first page", atoll.JobFilter{User: "user3"}},
		{"user deep page", atoll.JobFilter{User: "user3", Before: deep}},
		{"repo first page", atoll.JobFilter{Repo: "acme/repo4"}},
		{"repo deep page", atoll.JobFilter{Repo: "acme/repo4", Before: deep}},
		{"pull deep page", atoll.JobFilter{Repo: "acme/repo4", Pull: 3, Before: deep}},
		{"project deep page", atoll.JobFilter{Repo: "acme/repo4", Project: "dir3", Before: deep}},
		{"state deep page", atoll.JobFilter{State: atoll.JobQueued, Before: deep}},
		{"kind and date, deep", atoll.JobFilter{Kind: atoll.JobApply, From: epoch.Add(-time.Hour), Before: deep}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				h, err := db.JobHistory(ctx, c.f)
				if err != nil {
					b.Fatal(err)
				}
				if len(h.Jobs) == 0 {
					b.Fatal("empty page")
				}
			}
		})
	}
}

// BenchmarkSearchLogs searches 1,000,000 log lines (1,000 jobs of 1,000
// lines of Terraform-like output): a word in 1 line of 10,000, a phrase,
// and a word in every tenth line (the page stops after its scan bound).
// BenchmarkSearchLogs/append measures what indexing adds to storing lines.
//
//	go test -run '^$' -bench BenchmarkSearchLogs -benchtime 100x ./store
func BenchmarkSearchLogs(b *testing.B) {
	ctx := context.Background()
	db, _ := openClocked(b, filepath.Join(b.TempDir(), "atoll.db"))
	f := seed(b, db, 7)
	const jobs, perJob = 1000, 1000
	words := []string{"aws_s3_bucket", "aws_iam_role", "module.network", "google_compute_instance", "azurerm_resource_group"}
	start := time.Now()
	for j := range jobs {
		job := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", User: "alice"}
		update(b, db, func(tx *store.Tx) error {
			if err := tx.InsertJob(job); err != nil {
				return err
			}
			lines := make([]atoll.LogLine, perJob)
			for i := range lines {
				n := j*perJob + i
				text := fmt.Sprintf("  # %s.res_%d will be updated in-place", words[n%len(words)], n)
				switch {
				case n%10_000 == 4242:
					text = fmt.Sprintf("Error: creating S3 Bucket (acme-%d): BucketAlreadyExists", n)
				case n%10 == 3:
					text = fmt.Sprintf("  ~ tags = { \"team\" = \"platform-%d\" }", n)
				}
				lines[i] = atoll.LogLine{JobID: job.ID, Seq: int64(i + 1), Stream: atoll.StreamStdout, Time: tx.Now(), Text: text}
			}
			return tx.AppendLogs(lines)
		})
	}
	b.Logf("stored and indexed %d lines in %v", jobs*perJob, time.Since(start).Round(time.Millisecond))
	cases := []struct{ name, q string }{
		{"rare word", "BucketAlreadyExists"},
		{"phrase", `"creating S3 Bucket"`},
		{"common word", "platform"},
		{"two words", "aws_iam_role updated"},
		{"no match", "nothingmatchesthis"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := db.SearchLogs(ctx, c.q, atoll.JobFilter{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("filtered by user", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.SearchLogs(ctx, "BucketAlreadyExists", atoll.JobFilter{User: "alice"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Storing a 1,000-line batch, with the index (the triggers) and, for
	// comparison, without it.
	for _, indexed := range []bool{true, false} {
		name := "append 1000 lines indexed"
		if !indexed {
			name = "append 1000 lines not indexed"
			update(b, db, func(tx *store.Tx) error {
				if err := tx.Exec(`DROP TRIGGER log_lines_search_insert`); err != nil {
					return err
				}
				return tx.Exec(`DROP TRIGGER log_lines_search_delete`)
			})
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				job := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc"}
				update(b, db, func(tx *store.Tx) error {
					if err := tx.InsertJob(job); err != nil {
						return err
					}
					lines := make([]atoll.LogLine, 1000)
					for i := range lines {
						lines[i] = atoll.LogLine{JobID: job.ID, Seq: int64(i + 1), Stream: atoll.StreamStdout, Time: tx.Now(),
							Text: fmt.Sprintf("  # %s.res_%d will be updated in-place", words[i%len(words)], i)}
					}
					return tx.AppendLogs(lines)
				})
			}
		})
	}
}

// BenchmarkSearchBackfill is the start of a database with 1,000,000 log
// lines written before 0008_log_search.sql: the migration indexes them
// before the server starts.
//
//	go test -run '^$' -bench BenchmarkSearchBackfill -benchtime 1x ./store
func BenchmarkSearchBackfill(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "atoll.db")
		db := storetest.Open(b, storetest.Path(path))
		f := seed(b, db, 7)
		update(b, db, func(tx *store.Tx) error {
			for _, q := range []string{`DROP TRIGGER log_lines_search_insert`, `DROP TRIGGER log_lines_search_delete`,
				`DROP TABLE log_search`, `DROP INDEX jobs_user`, `DROP INDEX jobs_project`, `DROP INDEX jobs_created`,
				`DELETE FROM schema_migrations WHERE name = 'migrations/0008_log_search.sql'`} {
				if err := tx.Exec(q); err != nil {
					return err
				}
			}
			return nil
		})
		for j := range 1000 {
			job := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc"}
			update(b, db, func(tx *store.Tx) error {
				if err := tx.InsertJob(job); err != nil {
					return err
				}
				lines := make([]atoll.LogLine, 1000)
				for i := range lines {
					lines[i] = atoll.LogLine{JobID: job.ID, Seq: int64(i + 1), Stream: atoll.StreamStdout, Time: tx.Now(),
						Text: fmt.Sprintf("  # aws_s3_bucket.res_%d will be updated in-place", j*1000+i)}
				}
				return tx.AppendLogs(lines)
			})
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		db = store.NewDB(path)
		b.StartTimer()
		if err := db.Open(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if n, err := db.QueryInt(ctx, `SELECT COUNT(*) FROM log_search WHERE log_search MATCH 'updated'`); err != nil || n != 1_000_000 {
			b.Fatalf("%d lines indexed, %v", n, err)
		}
		db.Close()
		b.StartTimer()
	}
}

package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// clock is a controllable store.DB.Now, safe for the writer goroutine.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *clock) Add(d time.Duration) { c.ns.Add(int64(d)) }

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// openClocked opens a database at path whose clock the test sets.
func openClocked(t testing.TB, path string) (*store.DB, *clock) {
	t.Helper()
	c := &clock{}
	c.Set(epoch)
	db := storetest.Open(t, storetest.Path(path), storetest.Clock(c.Now))
	return db, c
}

func update(t testing.TB, db *store.DB, fn func(*store.Tx) error) {
	t.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func count(t testing.TB, db *store.DB, query string, args ...any) int64 {
	t.Helper()
	n, err := db.QueryInt(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func logLines(jobID int64, n int) []atoll.LogLine {
	lines := make([]atoll.LogLine, n)
	for i := range lines {
		lines[i] = atoll.LogLine{JobID: jobID, Seq: int64(i + 1), Stream: atoll.StreamStdout, Text: fmt.Sprintf("line %d of a terraform plan", i+1)}
	}
	return lines
}

// job makes a plan job with n log lines and leaves it in state (queued,
// running or a final state), all at the clock's time.
func job(t testing.TB, db *store.DB, f fixture, state string, n int) int64 {
	t.Helper()
	j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc"}
	update(t, db, func(tx *store.Tx) error {
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		if state != atoll.JobQueued {
			if err := tx.StartJob(j.ID); err != nil {
				return err
			}
		}
		if err := tx.AppendLogs(logLines(j.ID, n)); err != nil {
			return err
		}
		if state == atoll.JobQueued || state == atoll.JobRunning {
			return nil
		}
		return tx.FinishJob(j.ID, state, "", nil)
	})
	return j.ID
}

// project adds a project to f's repository, so that each plan of a test
// can have its own lock.
func project(t testing.TB, db *store.DB, f fixture, dir string) fixture {
	t.Helper()
	update(t, db, func(tx *store.Tx) (err error) {
		f.projectID, err = tx.UpsertProject(f.repoID, atoll.Project{Dir: dir, Workspace: "default"})
		return err
	})
	return f
}

// plan stores a plan for f's project as a plan job does, then applies or
// discards it (fate "applied", "discarded") or leaves it pending ("").
func plan(t testing.TB, db *store.DB, f fixture, fate string) *atoll.Plan {
	t.Helper()
	var p *atoll.Plan
	update(t, db, func(tx *store.Tx) error {
		if _, err := tx.TakeLock(f.projectID, f.pullID, "alice"); err != nil {
			return err
		}
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		p = &atoll.Plan{JobID: j.ID, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc",
			File: []byte("PK\x03\x04plan " + f.dir()), ShowJSON: []byte(`{"format_version":"1.2"}`), Summary: atoll.Summary{Add: 3, Destroy: 1}}
		if err := tx.InsertPlan(p); err != nil {
			return err
		}
		return tx.FinishJob(j.ID, atoll.JobSucceeded, "", &p.Summary)
	})
	switch fate {
	case "applied":
		update(t, db, func(tx *store.Tx) error { return tx.MarkPlanApplied(p.ID) })
	case "discarded":
		update(t, db, func(tx *store.Tx) error {
			_, err := tx.ReleaseLocks(atoll.LockSelector{PullID: f.pullID, ProjectID: f.projectID}, "alice", "pr-comment", "locks.unlock", "test")
			return err
		})
	}
	return p
}

func (f fixture) dir() string { return fmt.Sprint(f.projectID) }

var deliverySeq atomic.Int64

func webhookRecord(t testing.TB, db *store.DB, f fixture) string {
	t.Helper()
	id := fmt.Sprintf("delivery-%d", deliverySeq.Add(1))
	update(t, db, func(tx *store.Tx) error {
		_, err := tx.RecordWebhook(atoll.VCSGitHub, id, "pull_request", f.repoID, 1, "alice")
		return err
	})
	return id
}

func event(t testing.TB, db *store.DB, detail string) {
	t.Helper()
	update(t, db, func(tx *store.Tx) error {
		return tx.AddEvent(atoll.Event{Actor: "alice", Action: "test.event", Detail: detail})
	})
}

// kind is one kind of history: how to make one prunable row of it, how many
// of those rows are left, and where its window and count are.
type kind struct {
	name   string
	make   func(t testing.TB, db *store.DB, f fixture, i int) int64 // returns an id for left
	left   func(t testing.TB, db *store.DB, id int64) bool
	window func(r *store.Retention) *time.Duration
	pruned func(r store.PruneResult) int64
}

var kinds = []kind{
	{
		name: "log lines",
		make: func(t testing.TB, db *store.DB, f fixture, i int) int64 {
			return job(t, db, f, atoll.JobSucceeded, 1)
		},
		left: func(t testing.TB, db *store.DB, jobID int64) bool {
			return count(t, db, `SELECT COUNT(*) FROM log_lines WHERE job_id = ?`, jobID) > 0
		},
		window: func(r *store.Retention) *time.Duration { return &r.LogLines },
		pruned: func(r store.PruneResult) int64 { return r.LogLines },
	},
	{
		name: "webhooks",
		make: func(t testing.TB, db *store.DB, f fixture, i int) int64 {
			webhookRecord(t, db, f)
			return count(t, db, `SELECT MAX(id) FROM webhooks`)
		},
		left: func(t testing.TB, db *store.DB, id int64) bool {
			return count(t, db, `SELECT COUNT(*) FROM webhooks WHERE id = ?`, id) > 0
		},
		window: func(r *store.Retention) *time.Duration { return &r.Webhooks },
		pruned: func(r store.PruneResult) int64 { return r.Webhooks },
	},
	{
		name: "events",
		make: func(t testing.TB, db *store.DB, f fixture, i int) int64 {
			event(t, db, fmt.Sprint(i))
			return count(t, db, `SELECT MAX(id) FROM events`)
		},
		left: func(t testing.TB, db *store.DB, id int64) bool {
			return count(t, db, `SELECT COUNT(*) FROM events WHERE id = ?`, id) > 0
		},
		window: func(r *store.Retention) *time.Duration { return &r.Events },
		pruned: func(r store.PruneResult) int64 { return r.Events },
	},
	{
		name: "plan files",
		make: func(t testing.TB, db *store.DB, f fixture, i int) int64 {
			return plan(t, db, project(t, db, f, fmt.Sprintf("p%d", i)), "applied").ID
		},
		left: func(t testing.TB, db *store.DB, id int64) bool {
			_, err := db.PlanFile(context.Background(), id)
			if err != nil && atoll.ErrorCode(err) != atoll.ENOTFOUND {
				t.Fatalf("plan file %d: %v", id, err)
			}
			return err == nil
		},
		window: func(r *store.Retention) *time.Duration { return &r.PlanFiles },
		pruned: func(r store.PruneResult) int64 { return r.PlanFiles },
	},
}

// TestPruneEachKindOnlyPastItsWindow: with the default windows, a row an
// hour past its kind's window goes, one an hour inside it stays.
func TestPruneEachKindOnlyPastItsWindow(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
			f := seed(t, db, 1)
			r := store.DefaultRetention
			now := epoch.Add(3 * 365 * 24 * time.Hour)
			w := *k.window(&r)
			c.Set(now.Add(-w - time.Hour))
			old := k.make(t, db, f, 1)
			c.Set(now.Add(-w + time.Hour))
			young := k.make(t, db, f, 2)
			c.Set(now)

			res, err := db.Prune(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if k.left(t, db, old) {
				t.Errorf("the row from %v before now is still there", w+time.Hour)
			}
			if !k.left(t, db, young) {
				t.Errorf("the row from %v before now was pruned", w-time.Hour)
			}
			if got := k.pruned(res); got != 1 || res.Total() != 1 {
				t.Errorf("result = %+v, want 1 %s and nothing else", res, k.name)
			}
		})
	}
}

// TestPruneInBatches: 35 rows with BatchSize 10 take 4 transactions, and
// all go.
func TestPruneInBatches(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
			f := seed(t, db, 1)
			var ids []int64
			if k.name == "log lines" {
				// 35 lines of one job: the batches must split a job's log.
				ids = append(ids, job(t, db, f, atoll.JobFailed, 35))
			} else {
				for i := range 35 {
					ids = append(ids, k.make(t, db, f, i))
				}
			}
			c.Add(2 * time.Hour)
			r := store.Retention{BatchSize: 10}
			*k.window(&r) = time.Hour
			res, err := db.Prune(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if k.pruned(res) != 35 || res.Batches != 4 {
				t.Errorf("pruned %d in %d transactions, want 35 in 4 (result %+v)", k.pruned(res), res.Batches, res)
			}
			for _, id := range ids {
				if k.left(t, db, id) {
					t.Fatalf("row %d is left", id)
				}
			}
			// Nothing is left to do: one more run is one empty transaction.
			again, err := db.Prune(context.Background(), r)
			if err != nil || again.Total() != 0 || again.Batches != 1 {
				t.Errorf("second prune = %+v, %v; want one empty transaction", again, err)
			}
		})
	}
}

// TestPruneNeverTouchesLiveJobsOrPendingPlans: however old, the log of a
// queued or running job and the file of an applicable plan stay.
func TestPruneNeverTouchesLiveJobsOrPendingPlans(t *testing.T) {
	db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	f := seed(t, db, 1)
	queued := job(t, db, f, atoll.JobQueued, 5)
	running := job(t, db, f, atoll.JobRunning, 5)
	finished := job(t, db, f, atoll.JobInterrupted, 5)
	pending := plan(t, db, project(t, db, f, "pending"), "")
	discarded := plan(t, db, project(t, db, f, "discarded"), "discarded")
	c.Add(10 * 365 * 24 * time.Hour)

	res, err := db.Prune(context.Background(), store.Retention{LogLines: time.Nanosecond, PlanFiles: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{queued, running} {
		if n := count(t, db, `SELECT COUNT(*) FROM log_lines WHERE job_id = ?`, id); n != 5 {
			t.Errorf("job %d has %d log lines, want its 5", id, n)
		}
	}
	if n := count(t, db, `SELECT COUNT(*) FROM log_lines WHERE job_id = ?`, finished); n != 0 {
		t.Errorf("the interrupted job kept %d log lines", n)
	}
	if file, err := db.PlanFile(context.Background(), pending.ID); err != nil || !bytes.Equal(file, pending.File) {
		t.Errorf("pending plan file = %q, %v", file, err)
	}
	if pp, err := db.PendingPlans(context.Background(), f.pullID); err != nil || len(pp) != 1 || pp[0].ID != pending.ID {
		t.Errorf("pending plans = %+v, %v", pp, err)
	}
	if _, err := db.PlanFile(context.Background(), discarded.ID); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("discarded plan file error = %v, want it pruned", err)
	}
	if res.LogLines != 5 || res.PlanFiles != 1 {
		t.Errorf("result = %+v, want 5 log lines and 1 plan file", res)
	}
}

// TestPlanFileOfPrunedPlan: reading a pruned plan says so with a coded
// error, not a hash mismatch; its row, hash, summary and times stay.
func TestPlanFileOfPrunedPlan(t *testing.T) {
	ctx := context.Background()
	db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	f := seed(t, db, 1)
	p := plan(t, db, f, "applied")
	c.Add(31 * 24 * time.Hour)
	if _, err := db.Prune(ctx, store.Retention{PlanFiles: 30 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	_, err := db.PlanFile(ctx, p.ID)
	_, jerr := db.PlanByJob(ctx, p.JobID)
	for _, err := range []error{err, jerr} {
		if atoll.ErrorCode(err) != atoll.ENOTFOUND || !strings.Contains(atoll.ErrorMessage(err), "pruned by retention (--retain-plan-files)") {
			t.Errorf("error = %v, want not_found: pruned by retention", err)
		}
	}
	kept := count(t, db, `SELECT COUNT(*) FROM plans WHERE id = ? AND sha256 = ? AND add_count = 3 AND destroy_count = 1
		AND created_at > 0 AND applied_at > 0 AND length(file) = 0 AND length(show_json) = 0`, p.ID, p.SHA256)
	if kept != 1 {
		t.Error("the pruned plan's row, hash, summary or times changed, or its bytes are still there")
	}
	if _, err := db.PlanFile(ctx, p.ID+100); atoll.ErrorCode(err) != atoll.ENOTFOUND || strings.Contains(err.Error(), "pruned") {
		t.Errorf("missing plan error = %v, want a plain not_found", err)
	}
}

// TestPruneZeroKeepsForever: a zero window keeps its kind however old,
// without even a transaction.
func TestPruneZeroKeepsForever(t *testing.T) {
	db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	f := seed(t, db, 1)
	ids := make([]int64, len(kinds))
	for i, k := range kinds {
		ids[i] = k.make(t, db, f, i)
	}
	c.Add(100 * 365 * 24 * time.Hour)
	res, err := db.Prune(context.Background(), store.Retention{BatchSize: 1})
	if err != nil || res != (store.PruneResult{}) {
		t.Fatalf("prune = %+v, %v; want nothing done", res, err)
	}
	// One kind with a window does not prune the others.
	for i, k := range kinds {
		r := store.Retention{}
		*k.window(&r) = time.Hour
		if _, err := db.Prune(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		for j, other := range kinds {
			if left := other.left(t, db, ids[j]); left != (j > i) {
				t.Errorf("after pruning %s: %s left = %v", k.name, other.name, left)
			}
		}
	}
}

// TestPruneVacuumsOnlyIncrementalDatabases: by default freed pages stay in
// the file for reuse; a database created with auto_vacuum=INCREMENTAL gets
// them returned, in bounded steps.
func TestPruneVacuumsOnlyIncrementalDatabases(t *testing.T) {
	for _, incremental := range []bool{false, true} {
		t.Run(fmt.Sprintf("incremental=%v", incremental), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "atoll.db")
			if incremental {
				raw, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				// The mode must be set before the first table exists.
				if _, err := raw.Exec(`PRAGMA auto_vacuum = INCREMENTAL; CREATE TABLE created_incremental (x)`); err != nil {
					t.Fatal(err)
				}
				raw.Close()
			}
			db, c := openClocked(t, path)
			detail := strings.Repeat("x", 3000)
			update(t, db, func(tx *store.Tx) error {
				for range 1000 {
					if err := tx.AddEvent(atoll.Event{Actor: "a", Action: "big", Detail: detail}); err != nil {
						return err
					}
				}
				return nil
			})
			pagesBefore := count(t, db, `PRAGMA page_count`)
			c.Add(2 * time.Hour)
			res, err := db.Prune(context.Background(), store.Retention{Events: time.Hour, BatchSize: 100})
			if err != nil {
				t.Fatal(err)
			}
			free, pages := count(t, db, `PRAGMA freelist_count`), count(t, db, `PRAGMA page_count`)
			if res.Events != 1000 {
				t.Fatalf("pruned %d events", res.Events)
			}
			if incremental {
				if res.Vacuumed < 900 || free != 0 || pages > pagesBefore-900 {
					t.Errorf("vacuumed %d pages; %d free, %d of %d pages left", res.Vacuumed, free, pages, pagesBefore)
				}
			} else if res.Vacuumed != 0 || free < 900 || pages != pagesBefore {
				t.Errorf("vacuumed %d pages; %d free, %d of %d pages left; want the pages kept for reuse", res.Vacuumed, free, pages, pagesBefore)
			}
		})
	}
}

// syncBuffer is a log destination the pruner's goroutine writes to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPrunerRunsUntilStopped: the background task prunes at once and on
// every tick, logs what it removed, and returns when its context ends.
func TestPrunerRunsUntilStopped(t *testing.T) {
	db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	for i := range 3 {
		event(t, db, fmt.Sprint(i))
	}
	c.Add(2 * time.Hour)
	var logs syncBuffer
	p := &store.Pruner{DB: db, Retention: store.Retention{Events: time.Hour}, Every: 10 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s; log:\n%s", what, logs.String())
			}
		}
	}
	events := func() int64 { return count(t, db, `SELECT COUNT(*) FROM events`) }
	waitFor("first prune", func() bool { return events() == 0 })
	// Rows that age while it runs go at a later tick.
	event(t, db, "later")
	c.Add(2 * time.Hour)
	waitFor("prune on a tick", func() bool { return events() == 0 })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	out := logs.String()
	if !strings.Contains(out, `"msg":"retention: pruned"`) || !strings.Contains(out, `"events":3`) || !strings.Contains(out, `"events":1`) {
		t.Errorf("log does not report the pruned counts:\n%s", out)
	}
}

// BenchmarkPrune measures pruning a large backlog with the default batch:
// rows/s, the longest single transaction, and the longest a webhook
// arriving meanwhile waited for its commit.
func BenchmarkPrune(b *testing.B) {
	const jobs, linesPerJob, records, plans = 200, 500, 50000, 1000
	fills := []struct {
		name string
		rows int
		fill func(b *testing.B, db *store.DB, f fixture)
		set  func(r *store.Retention)
	}{
		{"log-lines", jobs * linesPerJob, func(b *testing.B, db *store.DB, f fixture) {
			for range jobs {
				job(b, db, f, atoll.JobSucceeded, linesPerJob)
			}
		}, func(r *store.Retention) { r.LogLines = time.Hour }},
		{"webhooks", records, func(b *testing.B, db *store.DB, f fixture) {
			for i := 0; i < records; i += 1000 {
				update(b, db, func(tx *store.Tx) error {
					for j := range 1000 {
						if _, err := tx.RecordWebhook(atoll.VCSGitHub, fmt.Sprintf("d-%d", i+j), "pull_request", f.repoID, 1, "alice"); err != nil {
							return err
						}
					}
					return nil
				})
			}
		}, func(r *store.Retention) { r.Webhooks = time.Hour }},
		{"events", records, func(b *testing.B, db *store.DB, f fixture) {
			for i := 0; i < records; i += 1000 {
				update(b, db, func(tx *store.Tx) error {
					for range 1000 {
						if err := tx.AddEvent(atoll.Event{Actor: "alice", Action: "plan", Repo: "acme/infra", Pull: 1, Detail: "dir staging workspace default"}); err != nil {
							return err
						}
					}
					return nil
				})
			}
		}, func(r *store.Retention) { r.Events = time.Hour }},
		{"plan-files", plans, func(b *testing.B, db *store.DB, f fixture) {
			file, show := bytes.Repeat([]byte("p"), 20<<10), bytes.Repeat([]byte("s"), 50<<10)
			for i := range plans {
				pf := project(b, db, f, fmt.Sprintf("p%d", i))
				update(b, db, func(tx *store.Tx) error {
					if _, err := tx.TakeLock(pf.projectID, pf.pullID, "alice"); err != nil {
						return err
					}
					j := &atoll.Job{Kind: atoll.JobPlan, PullID: pf.pullID, ProjectID: pf.projectID, HeadSHA: "abc"}
					if err := tx.InsertJob(j); err != nil {
						return err
					}
					p := &atoll.Plan{JobID: j.ID, PullID: pf.pullID, ProjectID: pf.projectID, HeadSHA: "abc", File: file, ShowJSON: show}
					if err := tx.InsertPlan(p); err != nil {
						return err
					}
					return tx.MarkPlanApplied(p.ID)
				})
			}
		}, func(r *store.Retention) { r.PlanFiles = time.Hour }},
	}
	for _, fl := range fills {
		b.Run(fl.name, func(b *testing.B) {
			var rows int64
			var batches int
			var elapsed, longest, writing time.Duration
			var busy, idle []time.Duration
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				db, c := openClocked(b, filepath.Join(dir, "atoll.db"))
				f := seed(b, db, 1)
				fl.fill(b, db, f)
				c.Add(2 * time.Hour)
				var r store.Retention
				fl.set(&r)
				// Webhooks keep arriving, one at a time, while it prunes;
				// for comparison, first for a while without pruning.
				stop := intake(b, db, f, "idle")
				time.Sleep(300 * time.Millisecond)
				idle = append(idle, stop()...)
				stop = intake(b, db, f, "busy")
				b.StartTimer()
				start := time.Now()
				res, err := db.Prune(context.Background(), r)
				elapsed += time.Since(start)
				b.StopTimer()
				busy = append(busy, stop()...)
				if err != nil {
					b.Fatal(err)
				}
				if res.Total() != int64(fl.rows) {
					b.Fatalf("pruned %d rows, want %d", res.Total(), fl.rows)
				}
				rows += res.Total()
				batches += res.Batches
				writing += res.Writing
				longest = max(longest, res.Longest)
				db.Close()
				os.RemoveAll(dir)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
			b.ReportMetric(ms(writing/time.Duration(batches)), "mean-tx-ms")
			b.ReportMetric(100*writing.Seconds()/elapsed.Seconds(), "writer-%")
			b.ReportMetric(ms(longest), "longest-tx-ms")
			for _, w := range []struct {
				name  string
				waits []time.Duration
			}{{"idle", idle}, {"busy", busy}} {
				slices.Sort(w.waits)
				if n := len(w.waits); n > 0 {
					b.ReportMetric(ms(w.waits[n*99/100]), "webhook-p99-"+w.name+"-ms")
					b.ReportMetric(ms(w.waits[n-1]), "webhook-max-"+w.name+"-ms")
				}
			}
		})
	}
}

// intake records webhooks one after another until stopped, and returns how
// long each waited for its commit.
func intake(b *testing.B, db *store.DB, f fixture, prefix string) (stop func() []time.Duration) {
	quit, done := make(chan struct{}), make(chan []time.Duration)
	go func() {
		var waits []time.Duration
		for i := 0; ; i++ {
			select {
			case <-quit:
				done <- waits
				return
			default:
			}
			start := time.Now()
			err := db.Update(context.Background(), func(tx *store.Tx) error {
				_, err := tx.RecordWebhook(atoll.VCSGitHub, fmt.Sprintf("%s-%d", prefix, i), "pull_request", f.repoID, 1, "bob")
				return err
			})
			if err != nil {
				b.Error(err)
			}
			waits = append(waits, time.Since(start))
		}
	}()
	return func() []time.Duration { close(quit); return <-done }
}

// TestPrunePlanBatchesAreBoundedByBytes: big plans are dropped a few per
// transaction, never more than PruneBatchBytes unless one plan is bigger.
func TestPrunePlanBatchesAreBoundedByBytes(t *testing.T) {
	db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	f := seed(t, db, 1)
	big := bytes.Repeat([]byte("p"), store.PruneBatchBytes*3/4)
	var ids []int64
	for i := range 3 {
		var id int64
		pf := project(t, db, f, fmt.Sprintf("big%d", i))
		update(t, db, func(tx *store.Tx) error {
			if _, err := tx.TakeLock(pf.projectID, pf.pullID, "alice"); err != nil {
				return err
			}
			j := &atoll.Job{Kind: atoll.JobPlan, PullID: pf.pullID, ProjectID: pf.projectID, HeadSHA: "abc"}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			p := &atoll.Plan{JobID: j.ID, PullID: pf.pullID, ProjectID: pf.projectID, HeadSHA: "abc", File: big, ShowJSON: []byte("{}")}
			if err := tx.InsertPlan(p); err != nil {
				return err
			}
			id = p.ID
			return tx.MarkPlanApplied(p.ID)
		})
		ids = append(ids, id)
	}
	// Small plans fill a batch up to the bound.
	for i := range 4 {
		ids = append(ids, plan(t, db, project(t, db, f, fmt.Sprintf("small%d", i)), "discarded").ID)
	}
	c.Add(2 * time.Hour)
	res, err := db.Prune(context.Background(), store.Retention{PlanFiles: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.PlanFiles != 7 || res.Batches != 3 {
		t.Errorf("pruned %d plans in %d transactions, want 7 in 3 (one big plan each, the small ones with the last)", res.PlanFiles, res.Batches)
	}
	for _, id := range ids {
		if _, err := db.PlanFile(context.Background(), id); atoll.ErrorCode(err) != atoll.ENOTFOUND {
			t.Errorf("plan %d: %v, want pruned", id, err)
		}
	}
}

// TestPruneStopsWhenContextEnds: an ended context stops Prune before its
// next batch, with the context's error.
func TestPruneStopsWhenContextEnds(t *testing.T) {
	db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	f := seed(t, db, 1)
	id := webhookRecord(t, db, f)
	c.Add(2 * time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := db.Prune(ctx, store.Retention{Webhooks: time.Hour})
	if err != context.Canceled || res.Total() != 0 {
		t.Fatalf("prune = %+v, %v; want nothing done, context canceled", res, err)
	}
	if dup, err := recordAgain(db, f, id); err != nil || !dup {
		t.Errorf("the webhook record is gone (duplicate = %v, %v)", dup, err)
	}
}

func recordAgain(db *store.DB, f fixture, delivery string) (dup bool, err error) {
	err = db.Update(context.Background(), func(tx *store.Tx) (err error) {
		dup, err = tx.RecordWebhook(atoll.VCSGitHub, delivery, "pull_request", f.repoID, 1, "alice")
		return err
	})
	return dup, err
}

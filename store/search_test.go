package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// logJob makes a finished plan job of f whose log is lines.
func logJob(t testing.TB, db *store.DB, f fixture, user string, lines ...string) int64 {
	t.Helper()
	j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", User: user}
	update(t, db, func(tx *store.Tx) error {
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		if err := tx.StartJob(j.ID); err != nil {
			return err
		}
		ll := make([]atoll.LogLine, len(lines))
		for i, text := range lines {
			ll[i] = atoll.LogLine{JobID: j.ID, Seq: int64(i + 1), Stream: atoll.StreamStdout, Time: tx.Now(), Text: text}
		}
		if err := tx.AppendLogs(ll); err != nil {
			return err
		}
		return tx.FinishJob(j.ID, atoll.JobSucceeded, "", nil)
	})
	return j.ID
}

func hitIDs(res atoll.LogSearchResult) []int64 {
	out := make([]int64, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.Job.ID
	}
	return out
}

func TestSearchLogs(t *testing.T) {
	ctx := context.Background()
	db, _ := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	f := seed(t, db, 7)
	a := logJob(t, db, f, "alice",
		"Initializing the backend...",
		"  # aws_s3_bucket.logs will be created",
		`Error: creating S3 Bucket (acme-logs): BucketAlreadyExists`,
	)
	b := logJob(t, db, f, "bob",
		"  # aws_s3_bucket.assets will be updated in-place",
		"Plan: 0 to add, 1 to change, 0 to destroy.",
	)
	other := project(t, db, f, "production")
	c := logJob(t, db, other, "alice", "No changes. Your infrastructure matches the configuration.")

	cases := []struct {
		q     string
		f     atoll.JobFilter
		want  []int64
		lines map[int64][]int64 // job → matching seqs
	}{
		{q: "bucket", want: []int64{b, a}, lines: map[int64][]int64{a: {2, 3}, b: {1}}},
		{q: "BUCKET will", want: []int64{b, a}, lines: map[int64][]int64{a: {2}, b: {1}}},
		{q: `"will be created"`, want: []int64{a}},
		{q: `"be will"`, want: nil},
		{q: "aws_s3_bucket.logs", want: []int64{a}, lines: map[int64][]int64{a: {2}}},
		{q: "infrastructure", want: []int64{c}},
		{q: "bucket", f: atoll.JobFilter{User: "alice"}, want: []int64{a}},
		{q: "changes", f: atoll.JobFilter{Project: "staging"}, want: nil},
		{q: "changes", f: atoll.JobFilter{Project: "production"}, want: []int64{c}},
		{q: "bucket", f: atoll.JobFilter{Before: b}, want: []int64{a}},
		// What would be FTS5 syntax is text here: no error, and it only
		// matches the words.
		{q: "bucket OR infrastructure", want: nil},
		{q: "NOT bucket", want: nil},
		{q: "buck*", want: nil},
		{q: "to: (add) - ^plan", want: []int64{b}},
		{q: "nothing-like-this", want: nil},
	}
	for _, c := range cases {
		res, err := db.SearchLogs(ctx, c.q, c.f)
		if err != nil {
			t.Errorf("%q: %v", c.q, err)
			continue
		}
		if got := hitIDs(res); !slices.Equal(got, c.want) {
			t.Errorf("%q %+v: jobs %v, want %v", c.q, c.f, got, c.want)
		}
		for _, h := range res.Hits {
			want, ok := c.lines[h.Job.ID]
			if !ok {
				continue
			}
			var got []int64
			for _, l := range h.Lines {
				got = append(got, l.Seq)
				if l.Text == "" {
					t.Errorf("%q: line %d of job %d has no text", c.q, l.Seq, l.JobID)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q: job %d lines %v, want %v", c.q, h.Job.ID, got, want)
			}
		}
	}
}

// A search page holds limit jobs; Older and the Before cursor reach the
// rest, each job once.
func TestSearchLogsPages(t *testing.T) {
	ctx := context.Background()
	db, _ := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	f := seed(t, db, 7)
	var want []int64
	for range 7 {
		want = append([]int64{logJob(t, db, f, "alice", "Error: timeout", "ok", "Error: again", "Error: 3", "Error: 4")}, want...)
	}
	var got []int64
	filter := atoll.JobFilter{Limit: 3}
	for range 10 {
		res, err := db.SearchLogs(ctx, "error", filter)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if len(h.Lines) != 3 || !h.More || h.Matches != 4 {
				t.Errorf("job %d: %d lines, more %v, %d matches; want the last 3 of 4", h.Job.ID, len(h.Lines), h.More, h.Matches)
			}
			if h.Lines[0].Seq != 3 || h.Lines[2].Seq != 5 {
				t.Errorf("job %d: lines %+v, want seq 3..5 in order", h.Job.ID, h.Lines)
			}
		}
		got = append(got, hitIDs(res)...)
		if !res.Older {
			break
		}
		filter.Before = res.Hits[len(res.Hits)-1].Job.ID
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages gave %v, want %v", got, want)
	}
}

func TestSearchRejectsWhatItCannotSearch(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	for _, q := range []string{``, `   `, `"unbalanced`, `a "b" "c`, `- * :`, `""`, strings.Repeat("x", 501), strings.Repeat("w ", 17)} {
		_, err := db.SearchLogs(ctx, q, atoll.JobFilter{})
		if atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("%q: err = %v, want a coded invalid error", q, err)
		}
	}
	if _, err := db.SearchLogs(ctx, `"unbalanced`, atoll.JobFilter{}); !strings.Contains(atoll.ErrorMessage(err), "unbalanced double quote") {
		t.Errorf("unbalanced quote: message %q does not say so", atoll.ErrorMessage(err))
	}
}

// The index is FTS5, searched in rowid order without a sort.
func TestSearchQueryPlan(t *testing.T) {
	db := storetest.Open(t)
	plan, err := db.ExplainSearchLogs(context.Background(), "bucket")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(plan)
	if !strings.Contains(plan, "VIRTUAL TABLE INDEX") || strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN l") {
		t.Errorf("plan:\n%s", plan)
	}
}

// Retention deletes pruned lines from the index too: a search no longer
// finds them, and the index holds only what log_lines holds.
func TestPruneRemovesLinesFromSearch(t *testing.T) {
	ctx := context.Background()
	db, c := openClocked(t, filepath.Join(t.TempDir(), "atoll.db"))
	f := seed(t, db, 7)
	old := logJob(t, db, f, "alice", "Error: old failure", "more output")
	c.Add(100 * 24 * time.Hour)
	young := logJob(t, db, f, "alice", "Error: young failure")
	res, err := db.SearchLogs(ctx, "failure", atoll.JobFilter{})
	if err != nil || !slices.Equal(hitIDs(res), []int64{young, old}) {
		t.Fatalf("before pruning: %v, %v", hitIDs(res), err)
	}
	if _, err := db.Prune(ctx, store.Retention{LogLines: 90 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	res, err = db.SearchLogs(ctx, "failure", atoll.JobFilter{})
	if err != nil || !slices.Equal(hitIDs(res), []int64{young}) {
		t.Fatalf("after pruning: %v, %v", hitIDs(res), err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM log_search WHERE log_search MATCH 'output'`); n != 0 {
		t.Errorf("the index still has %d pruned line(s)", n)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM log_search`); n != 1 {
		t.Errorf("the index has %d rows, log_lines 1", n)
	}
}

// A database that had log lines before 0008_log_search.sql finds them
// once the migration ran.
func TestSearchMigrationIndexesExistingLines(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atoll.db")
	db := storetest.Open(t, storetest.Path(path))
	// Back to the schema before 0008, then write lines as Atoll did then.
	f := seed(t, db, 7)
	update(t, db, func(tx *store.Tx) error {
		for _, q := range []string{`DROP TRIGGER log_lines_search_insert`, `DROP TRIGGER log_lines_search_delete`,
			`DROP TABLE log_search`, `DROP INDEX jobs_user`, `DROP INDEX jobs_project`, `DROP INDEX jobs_created`,
			`DELETE FROM schema_migrations WHERE name = 'migrations/0008_log_search.sql'`} {
			if err := tx.Exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if n := count(t, db, `SELECT COUNT(*) FROM schema_migrations WHERE name LIKE '%0008%'`); n != 0 {
		t.Fatal("0008 is still recorded")
	}
	j := logJob(t, db, f, "alice", "first line", "Error: an old failure")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = storetest.Open(t, storetest.Path(path))
	res, err := db.SearchLogs(ctx, "failure", atoll.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hitIDs(res), []int64{j}) || len(res.Hits[0].Lines) != 1 || res.Hits[0].Lines[0].Seq != 2 {
		t.Fatalf("after the migration: %+v", res)
	}
	// And new lines are indexed as they are written.
	k := logJob(t, db, f, "bob", "a new failure")
	if res, err := db.SearchLogs(ctx, "failure", atoll.JobFilter{}); err != nil || !slices.Equal(hitIDs(res), []int64{k, j}) {
		t.Fatalf("new lines: %v, %v", hitIDs(res), err)
	}
}

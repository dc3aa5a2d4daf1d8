package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/web"
)

type pageFixture struct {
	s                          *web.Server
	srv                        *httptest.Server
	db                         *store.DB
	repoID, pullID, projectID  int64
	doneJob, liveJob, lockID   int64
	commentID, hiddenCommentID int64
	headSHA                    string
}

// newPageFixture seeds one pull request with a finished plan job (log,
// plan, lock, status), a running job and a conversation.
func newPageFixture(t *testing.T) *pageFixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	f := &pageFixture{db: db, headSHA: "0123456789abcdef0123456789abcdef01234567"}
	err := db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if f.repoID, err = tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "acme", Name: "infra"}); err != nil {
			return err
		}
		f.pullID, err = tx.UpsertPull(f.repoID, atoll.Pull{Number: 7, Title: "Add <b>bucket</b>", Author: "alice",
			HeadSHA: f.headSHA, HeadRef: "feature", BaseRef: "main"})
		if err != nil {
			return err
		}
		if f.projectID, err = tx.UpsertProject(f.repoID, atoll.Project{Dir: "staging", Workspace: "default"}); err != nil {
			return err
		}
		done := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: f.headSHA, User: "alice"}
		if err := tx.InsertJob(done); err != nil {
			return err
		}
		f.doneJob = done.ID
		if err := tx.StartJob(done.ID); err != nil {
			return err
		}
		if err := tx.FinishJob(done.ID, atoll.JobSucceeded, "", &atoll.Summary{Add: 2, Change: 1, Destroy: 3}); err != nil {
			return err
		}
		plan := &atoll.Plan{JobID: done.ID, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: f.headSHA,
			Summary: atoll.Summary{Add: 2, Change: 1, Destroy: 3}, File: []byte("plan"), ShowJSON: []byte("{}")}
		if holder, err := tx.TakeLock(f.projectID, f.pullID, "alice"); err != nil || holder != nil {
			return err
		}
		if err := tx.InsertPlan(plan); err != nil {
			return err
		}
		live := &atoll.Job{Kind: atoll.JobApply, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: f.headSHA, User: "bob"}
		if err := tx.InsertJob(live); err != nil {
			return err
		}
		f.liveJob = live.ID
		if err := tx.StartJob(live.ID); err != nil {
			return err
		}
		if err := tx.SetStatus(f.repoID, atoll.CommitStatus{SHA: f.headSHA, Context: "atlantis/plan", State: "success",
			Description: "1/1 projects planned"}); err != nil {
			return err
		}
		if f.hiddenCommentID, err = tx.AddComment(f.pullID, "atoll", "Ran Plan (old)\n\n```diff\n+ old\n```"); err != nil {
			return err
		}
		if err := tx.HideComments(f.pullID, "atoll", "(old)"); err != nil {
			return err
		}
		f.commentID, err = tx.AddComment(f.pullID, "mallory", "atlantis plan <script>alert(1)</script>\n"+
			"<details><summary>Show <img src=x onerror=alert(2)></summary>\n\n```\n<iframe src=javascript:alert(3)>\n```\n</details>")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().UTC()
	err = db.AppendLogs(ctx, []atoll.LogLine{
		{JobID: f.doneJob, Seq: 1, Stream: atoll.StreamAtoll, Time: base, Text: "$ terraform init"},
		{JobID: f.doneJob, Seq: 2, Stream: atoll.StreamStdout, Time: base, Text: "first line"},
		{JobID: f.doneJob, Seq: 3, Stream: atoll.StreamStderr, Time: base, Text: "Warning: <deprecated>"},
		{JobID: f.doneJob, Seq: 4, Stream: atoll.StreamStdout, Time: base, Text: "Plan: 2 to add, 1 to change, 3 to destroy."},
	})
	if err != nil {
		t.Fatal(err)
	}
	locks, err := db.Locks(ctx)
	if err != nil || len(locks) != 1 {
		t.Fatalf("locks = %v, %v", locks, err)
	}
	f.lockID = locks[0].ID
	s := &web.Server{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Demo: true, Version: "v9.9.9", Node: "node-a"}
	f.s = s
	f.srv = httptest.NewServer(asUser(s.Handler(), operator))
	t.Cleanup(f.srv.Close)
	return f
}

// get fetches path and returns the status, content type and body.
func (f *pageFixture) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(f.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func wantHTML(t *testing.T, res *http.Response, status int) {
	t.Helper()
	if res.StatusCode != status {
		t.Errorf("%s: status = %d, want %d", res.Request.URL.Path, res.StatusCode, status)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("%s: content type = %q", res.Request.URL.Path, ct)
	}
}

func wantContains(t *testing.T, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestPullPage(t *testing.T) {
	f := newPageFixture(t)
	res, body := f.get(t, "/repos/acme/infra/pulls/7")
	wantHTML(t, res, http.StatusOK)
	wantContains(t, body,
		`href="/"`, "Add &lt;b&gt;bucket&lt;/b&gt;", "feature", "main", f.headSHA,
		// Commit status, pending plan, jobs, lock.
		"atlantis/plan", "1/1 projects planned", "badge-success",
		"job #"+itoa(f.doneJob), `<span class="del">-3</span>`,
		`href="/jobs/`+itoa(f.liveJob)+`"`,
		// The lock, with its Unlock form for the locks route.
		`action="/locks/unlock"`, `name="id" value="`+itoa(f.lockID)+`"`,
		// Conversation: the hostile comment is escaped text.
		"mallory", "&lt;script&gt;alert(1)&lt;/script&gt;",
		"Show &lt;img src=x onerror=alert(2)&gt;", "&lt;iframe src=javascript:alert(3)&gt;",
		// The outdated comment is collapsed.
		`<details class="comment hidden">`, "hidden as outdated",
		// The comment box: a form that works without JavaScript.
		`<form id="comment" class="comment-box" method="post" action="/repos/acme/infra/pulls/7/comment" hx-post="/repos/acme/infra/pulls/7/comment"`,
		`name="body"`, "atlantis plan -d staging")
	// Pages never reload themselves (live.js updates them in place).
	if strings.Contains(body, "data-refresh") || strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("the page reloads itself")
	}
	for _, raw := range []string{"<script>alert(1)", "<img src=x", "<iframe", "<b>bucket"} {
		if strings.Contains(body, raw) {
			t.Errorf("page contains raw %q", raw)
		}
	}
	// Only our own files: no inline script (the CSP forbids it).
	if n := strings.Count(body, "<script"); n != 3 || strings.Count(body, `<script src="/assets/`) != 3 {
		t.Errorf("page has %d script tags, want only htmx.min.js, atoll.js and live.js", n)
	}
}

func TestPageErrors(t *testing.T) {
	f := newPageFixture(t)
	for _, tc := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/jobs/999", http.StatusNotFound, "Job 999 not found."},
		{"/jobs/abc", http.StatusBadRequest, "Invalid id"},
		{"/jobs/0", http.StatusBadRequest, "Invalid id"},
		{"/jobs/-1", http.StatusBadRequest, "Invalid id"},
		{"/repos/acme/infra/pulls/99", http.StatusNotFound, "Pull request not found."},
		{"/repos/acme/infra/pulls/x", http.StatusBadRequest, "Invalid pull request number"},
		{"/repos/acme/infra/pulls/0", http.StatusBadRequest, "Invalid pull request number"},
		{"/repos/nobody/none/pulls/1", http.StatusNotFound, "Pull request not found."},
		{"/no/such/page", http.StatusNotFound, "There is no page at this address."},
		{"/assets/missing.css", http.StatusNotFound, "No such file."},
		{"/assets/", http.StatusNotFound, "No such file."},
	} {
		res, body := f.get(t, tc.path)
		wantHTML(t, res, tc.status)
		wantContains(t, body, tc.msg, `href="/"`)
	}
	// Unknown API paths stay JSON.
	res, body := f.get(t, "/api/v1/nope")
	if res.StatusCode != http.StatusNotFound || !strings.Contains(res.Header.Get("Content-Type"), "json") || !strings.Contains(body, `"error"`) {
		t.Errorf("unknown API path: %d %q %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	// The JSON API still answers.
	res, body = f.get(t, "/api/v1/locks")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"acme/infra"`) {
		t.Errorf("GET /api/v1/locks: %d %s", res.StatusCode, body)
	}
}

func TestAssets(t *testing.T) {
	f := newPageFixture(t)
	for path, ct := range map[string]string{
		"/assets/atoll.css": "text/css; charset=utf-8",
		"/assets/atoll.js":  "text/javascript; charset=utf-8",
	} {
		res, body := f.get(t, path)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != ct || len(body) == 0 {
			t.Errorf("%s: %d %q (%d bytes)", path, res.StatusCode, res.Header.Get("Content-Type"), len(body))
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age") {
			t.Errorf("%s: Cache-Control = %q", path, cc)
		}
		etag := res.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", path)
		}
		req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
		req.Header.Set("If-None-Match", etag)
		res2, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res2.Body.Close()
		if res2.StatusCode != http.StatusNotModified {
			t.Errorf("%s with If-None-Match: %d, want 304", path, res2.StatusCode)
		}
	}
	// The versioned URLs the pages use are cached for good.
	_, page := f.get(t, "/")
	i := strings.Index(page, "/assets/atoll.css?v=")
	if i < 0 {
		t.Fatal("index does not link the versioned stylesheet")
	}
	url := page[i:]
	url = url[:strings.IndexByte(url, '"')]
	res, _ := f.get(t, url)
	if cc := res.Header.Get("Cache-Control"); res.StatusCode != http.StatusOK || !strings.Contains(cc, "immutable") {
		t.Errorf("%s: %d Cache-Control = %q", url, res.StatusCode, cc)
	}
}

package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

func TestJobPage(t *testing.T) {
	f := newPageFixture(t)
	res, body := f.get(t, "/jobs/"+itoa(f.doneJob))
	wantHTML(t, res, http.StatusOK)
	wantContains(t, body, `href="/"`, `href="/repos/acme/infra/pulls/7"`, "badge-succeeded",
		// The header: repo, PR, project, workspace, step, head, who, times.
		"acme/infra", "#7", "staging", "default", "plan", `title="`+f.headSHA+`"`, "0123456", "alice",
		`<span class="add">+2</span>`, "Created", "Started", "Finished", "Duration", "Outcome",
		// Live: the header is re-fetched when the job changes.
		`id="job-header"`, `hx-get="/jobs/`+itoa(f.doneJob)+`?section=header"`, `data-live-topics="job"`, `data-live-job="`+itoa(f.doneJob)+`"`,
		// The log, one element per line with its seq and stream.
		`id="log"`, `data-last-seq="4"`, `data-live="false"`, `data-seq="1"`, `data-seq="4"`, `id="L1"`, `id="L4"`,
		`class="ln s-stderr"`, `class="ln s-atoll"`, "Warning: &lt;deprecated&gt;",
		`id="follow"`, `href="/jobs/`+itoa(f.doneJob)+`/log.txt"`, "/assets/live.js")
	last := -1
	for _, line := range []string{"$ terraform init", "first line", "Warning: &lt;deprecated&gt;", "Plan: 2 to add, 1 to change, 3 to destroy."} {
		i := strings.Index(body, line)
		if i < 0 {
			t.Fatalf("log line %q missing", line)
		}
		if i < last {
			t.Errorf("log line %q out of order", line)
		}
		last = i
	}
	if strings.Contains(body, `http-equiv="refresh"`) || strings.Contains(body, "data-refresh") {
		t.Error("the job page reloads itself")
	}

	res, body = f.get(t, "/jobs/"+itoa(f.liveJob))
	wantHTML(t, res, http.StatusOK)
	wantContains(t, body, "badge-running", "bob", "No output yet.", `data-live="true"`, `data-last-seq="0"`, "not finished")
	if strings.Contains(body, `http-equiv="refresh"`) || strings.Contains(body, "data-refresh") {
		t.Error("a running job's page reloads itself")
	}

	// The header alone, for live.js to swap in.
	res, body = f.get(t, "/jobs/"+itoa(f.liveJob)+"?section=header")
	wantHTML(t, res, http.StatusOK)
	wantContains(t, body, "badge-running", "bob")
	if strings.Contains(body, "<html") || strings.Contains(body, `id="log"`) {
		t.Errorf("the header section is more than the header: %s", body)
	}
	res, _ = f.get(t, "/jobs/"+itoa(f.liveJob)+"?section=nope")
	wantHTML(t, res, http.StatusBadRequest)
}

// Terraform's colours become spans with classes; other escapes go; change
// lines are marked; nothing of a line is ever markup.
func TestJobPageColours(t *testing.T) {
	f := newPageFixture(t)
	job := f.addJob(t, []string{
		"  \x1b[32m+\x1b[0m resource \"aws_s3_bucket\" \"b\" {",
		"      \x1b[33m~\x1b[0m tags = {",
		"\x1b[31m-/+\x1b[0m resource \"x\" \"y\" {",
		"  \x1b[31m-\x1b[0m gone",
		"\x1b[1m\x1b[31mError: \x1b[0m\x1b[0m\x1b[1m<img src=x onerror=alert(1)>\x1b[0m",
		"\x1b[2K\x1b]0;title\x07plain",
	})
	res, body := f.get(t, "/jobs/"+itoa(job))
	wantHTML(t, res, http.StatusOK)
	wantContains(t, body,
		`class="ln s-stdout d-add"`, `<span class="fg-green">+</span> resource`,
		`class="ln s-stdout d-change"`, `<span class="fg-yellow">~</span>`,
		`class="ln s-stdout d-replace"`, `class="ln s-stdout d-destroy"`,
		`<span class="b fg-red">Error: </span><span class="b">&lt;img src=x onerror=alert(1)&gt;</span>`,
		`data-seq="6">plain</div>`)
	if strings.Contains(body, "\x1b") || strings.Contains(body, "<img") || strings.Contains(body, "title") && strings.Contains(body, "]0;") {
		t.Error("escape sequences or markup leaked into the page")
	}
}

// A long log shows its last 2,000 lines and links the download for the
// rest; the download has every line, escapes stripped.
func TestJobLogDownload(t *testing.T) {
	f := newPageFixture(t)
	const n = 12345 // more than two download pages
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("\x1b[32mline %d\x1b[0m", i+1)
	}
	job := f.addJob(t, lines)
	res, body := f.get(t, "/jobs/"+itoa(job))
	wantHTML(t, res, http.StatusOK)
	wantContains(t, body, "10345 earlier lines are not shown", `data-seq="10346"`, `data-seq="12345"`, `data-last-seq="12345"`)
	if strings.Contains(body, `data-seq="10345"`) || strings.Count(body, `class="ln `) != 2000 {
		t.Errorf("the page shows %d lines; want the last 2000", strings.Count(body, `class="ln `))
	}

	// A search hit links to /jobs/{id}#L<seq>; a line not among the last
	// ones is shown with ?line=, with some lines before it.
	res, body = f.get(t, "/jobs/"+itoa(job)+"?line=500")
	wantHTML(t, res, http.StatusOK)
	wantContains(t, body, `id="L500"`, `id="L400"`, "399 earlier lines are not shown", "9946 later lines are not shown",
		`href="/jobs/`+itoa(job)+`"`, `data-live="false"`)
	if strings.Contains(body, `id="L399"`) || strings.Contains(body, `id="L2400"`) {
		t.Error("?line=500 shows lines outside its window")
	}
	res, _ = f.get(t, "/jobs/"+itoa(job)+"?line=0")
	wantHTML(t, res, http.StatusBadRequest)

	res, err := http.Get(f.srv.URL + "/jobs/" + itoa(job) + "/log.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		res.Header.Get("Content-Disposition") != `attachment; filename="atoll-job-`+itoa(job)+`.log"` {
		t.Fatalf("log.txt: %d %v", res.StatusCode, res.Header)
	}
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(got) != n {
		t.Fatalf("log.txt has %d lines; want %d", len(got), n)
	}
	for i, l := range got {
		if l != fmt.Sprintf("line %d", i+1) {
			t.Fatalf("log.txt line %d = %q", i+1, l)
		}
	}
	// The API's log keeps the line as printed, and is paged the same way.
	res, err = http.Get(f.srv.URL + "/api/v1/jobs/" + itoa(job) + "/log")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if raw := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); len(raw) != n || raw[n-1] != lines[n-1] {
		t.Fatalf("API log: %d lines, last %q", len(raw), raw[len(raw)-1])
	}
	for path, want := range map[string]int{"/jobs/999/log.txt": 404, "/jobs/x/log.txt": 400} {
		res, _ := f.get(t, path)
		if res.StatusCode != want {
			t.Errorf("%s: %d; want %d", path, res.StatusCode, want)
		}
	}
}

// addJob records a finished job of the fixture's pull request with lines
// as its log and returns its id.
func (f *pageFixture) addJob(t *testing.T, lines []string) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := f.db.Update(ctx, func(tx *store.Tx) error {
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: f.headSHA, User: "carol"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		id = j.ID
		if err := tx.StartJob(j.ID); err != nil {
			return err
		}
		return tx.FinishJob(j.ID, atoll.JobFailed, "exit status 1", nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]atoll.LogLine, 0, len(lines))
	for i, l := range lines {
		batch = append(batch, atoll.LogLine{JobID: id, Seq: int64(i + 1), Stream: atoll.StreamStdout, Time: time.Now(), Text: l})
	}
	if err := f.db.AppendLogs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	return id
}

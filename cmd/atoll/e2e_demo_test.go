package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// demoPullPath is the API path of the demo's pull request.
const demoPullPath = "/api/v1/repos/demo/infra/pulls/1"

// startDemo starts the real server in demo mode on dataDir and closes it at
// the end of the test.
func startDemo(t testing.TB, dataDir string) *main.Main {
	t.Helper()
	m := startMain(t, dataDir, func(c *main.Config) {
		c.Demo = true
		// The command line's validate() defaults the allowlist to the demo's
		// repository; Main.Run does not, so it is set here as --demo would.
		c.RepoAllowlist = "local/demo/*"
	})
	t.Cleanup(func() { m.Close() })
	return m
}

// demoPostComment posts body (a JSON document, sent as is) to the demo pull
// request's comment endpoint and returns the status and decoded answer.
func demoPostComment(t testing.TB, m *main.Main, raw string) (int, map[string]any) {
	t.Helper()
	resp, err := authClient.Post(m.URL+demoPullPath+"/comments", "application/json", strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("POST comment %s: status %d, body is not JSON: %v: %s", raw, resp.StatusCode, err, b)
	}
	return resp.StatusCode, out
}

// demoComment posts a command to the demo pull request as the comment box does
// and requires it to be queued.
func demoComment(t testing.TB, m *main.Main, body string) {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"body": body})
	status, out := demoPostComment(t, m, string(raw))
	if status != http.StatusCreated || out["queued"] != true {
		t.Fatalf("POST comment %q = %d %v, want 201 queued", body, status, out)
	}
}

// demoJobs lists the demo pull request's jobs of kind, newest first.
func demoJobs(t testing.TB, m *main.Main, kind string) []atoll.Job {
	t.Helper()
	var jobs []atoll.Job
	if st := getJSON(t, m.URL+"/api/v1/jobs?repo=demo/infra&pull=1&kind="+kind, &jobs); st != http.StatusOK {
		t.Fatalf("GET jobs: %d", st)
	}
	return jobs
}

// demoWaitJob waits until a job of kind for project is final and returns it.
func demoWaitJob(t testing.TB, m *main.Main, kind, project string) atoll.Job {
	t.Helper()
	var found atoll.Job
	eventually(t, 120*time.Second, kind+" of "+project, func() bool {
		for _, j := range demoJobs(t, m, kind) {
			if j.Project == project && j.Final() {
				found = j
				return true
			}
		}
		return false
	})
	return found
}

// demoPullDetail is GET /api/v1/repos/demo/infra/pulls/1.
type demoPullDetail struct {
	atoll.Pull
	Projects []atoll.Project `json:"projects"`
	Plans    []atoll.Plan    `json:"plans"`
	Jobs     []atoll.Job     `json:"jobs"`
	Locks    []atoll.Lock    `json:"locks"`
}

func demoPull(t testing.TB, m *main.Main) demoPullDetail {
	t.Helper()
	var d demoPullDetail
	if st := getJSON(t, m.URL+demoPullPath, &d); st != http.StatusOK {
		t.Fatalf("GET %s: %d", demoPullPath, st)
	}
	return d
}

func demoLocks(t testing.TB, m *main.Main) []atoll.Lock {
	t.Helper()
	var locks []atoll.Lock
	if st := getJSON(t, m.URL+"/api/v1/locks", &locks); st != http.StatusOK {
		t.Fatalf("GET locks: %d", st)
	}
	return locks
}

func demoGetText(t testing.TB, url string) string {
	t.Helper()
	resp, err := authClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d: %s", url, resp.StatusCode, readAll(t, resp))
	}
	return readAll(t, resp)
}

// demoWaitLog waits until a job's stored log contains text. The log is
// polled: the runner marks a job final before it flushes the job's last log
// lines to the store.
func demoWaitLog(t testing.TB, m *main.Main, jobID int64, text string) {
	t.Helper()
	url := fmt.Sprintf("%s/api/v1/jobs/%d/log", m.URL, jobID)
	var log string
	deadline := time.Now().Add(30 * time.Second)
	for log = demoGetText(t, url); !strings.Contains(log, text); log = demoGetText(t, url) {
		if time.Now().After(deadline) {
			t.Fatalf("log of job %d does not contain %q:\n%s", jobID, text, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// demoComments reads the demo pull request's conversation from the store.
func demoComments(t testing.TB, m *main.Main) []atoll.PullComment {
	t.Helper()
	ctx := context.Background()
	pull, err := m.DB.PullByNumber(ctx, "demo/infra", 1)
	if err != nil {
		t.Fatal(err)
	}
	comments, err := m.DB.Comments(ctx, pull.ID)
	if err != nil {
		t.Fatal(err)
	}
	return comments
}

// demoWaitReply waits for Atoll's first comment after the first n comments
// and returns its body.
func demoWaitReply(t testing.TB, m *main.Main, n int, what string) string {
	t.Helper()
	var body string
	eventually(t, 120*time.Second, what, func() bool {
		cs := demoComments(t, m)
		for _, c := range cs[min(n, len(cs)):] {
			if c.Author == "atoll" {
				body = c.Body
				return true
			}
		}
		return false
	})
	return body
}

// demoWaitIdle waits until no request is queued or running, so that every
// reply to earlier commands has been posted.
func demoWaitIdle(t testing.TB, m *main.Main) {
	t.Helper()
	eventually(t, 120*time.Second, "requests done", func() bool {
		metrics := demoGetText(t, m.URL+"/metrics")
		return strings.Contains(metrics, `atoll_requests{state="queued"} 0`) &&
			strings.Contains(metrics, `atoll_requests{state="running"} 0`)
	})
}

func dumpComments(t testing.TB, m *main.Main) string {
	var b strings.Builder
	for _, c := range demoComments(t, m) {
		fmt.Fprintf(&b, "--- #%d by %s (hidden %v)\n%s\n", c.ID, c.Author, c.Hidden, c.Body)
	}
	return b.String()
}

// The demo works end to end on the real server and Terraform: it seeds a
// pull request that autoplans and locks staging; comments plan, refuse an
// unapproved apply, apply, answer bad commands with usage and unlock; a
// restart keeps the history and does not seed again.
func TestDemoEndToEnd(t *testing.T) {
	testEnv(t)
	dataDir := t.TempDir()
	m := startDemo(t, dataDir)

	var pulls []struct {
		atoll.Pull
		Projects []atoll.Project `json:"projects"`
	}
	getJSON(t, m.URL+"/api/v1/pulls", &pulls)
	if len(pulls) != 1 || pulls[0].Repo != "demo/infra" || pulls[0].Number != 1 || pulls[0].State != atoll.PullOpen {
		t.Fatalf("pulls = %+v, want open demo/infra#1", pulls)
	}

	// The seeded autoplan plans staging only, and locks it.
	autoplan := demoWaitJob(t, m, atoll.JobPlan, "staging")
	if autoplan.State != atoll.JobSucceeded || autoplan.Summary == nil || autoplan.Summary.Add == 0 || autoplan.Dir != "staging" {
		t.Fatalf("autoplan job = %+v (summary %+v), want a succeeded plan of staging that adds", autoplan, autoplan.Summary)
	}
	if plans := demoJobs(t, m, atoll.JobPlan); len(plans) != 1 {
		t.Fatalf("plan jobs after autoplan = %+v, want only staging's", plans)
	}
	locks := demoLocks(t, m)
	if len(locks) != 1 || locks[0].Project != "staging" || locks[0].Pull != 1 || locks[0].Repo != "demo/infra" {
		t.Fatalf("locks = %+v, want staging held by demo/infra#1", locks)
	}
	demoWaitLog(t, m, autoplan.ID, "terraform_data")
	if c := demoWaitReply(t, m, 1, "autoplan comment"); !strings.Contains(c, "Plan:") || !strings.Contains(c, "staging") {
		t.Fatalf("autoplan comment:\n%s", c)
	}

	// Plan production by comment.
	demoComment(t, m, "atlantis plan -d production")
	prod := demoWaitJob(t, m, atoll.JobPlan, "production")
	if prod.State != atoll.JobSucceeded || prod.Dir != "production" || prod.Summary == nil || prod.Summary.Add == 0 {
		t.Fatalf("production plan = %+v (summary %+v), want succeeded with additions\n%s", prod, prod.Summary, dumpComments(t, m))
	}
	eventually(t, 30*time.Second, "lock on production", func() bool { return len(demoLocks(t, m)) == 2 })

	// Production requires approval: its apply is refused and nothing runs.
	demoWaitIdle(t, m)
	n := len(demoComments(t, m))
	demoComment(t, m, "atlantis apply -p production")
	refused := demoWaitReply(t, m, n, "reply to the production apply")
	t.Logf("reply to the unapproved apply:\n%s", refused)
	if !strings.Contains(strings.ToLower(refused), "approv") {
		t.Fatalf("reply to the unapproved apply does not mention approval:\n%s", refused)
	}
	for _, j := range demoJobs(t, m, atoll.JobApply) {
		if j.State == atoll.JobSucceeded {
			t.Fatalf("an apply succeeded without approval: %+v", j)
		}
		if j.Project == "production" && j.Final() && !strings.Contains(strings.ToLower(j.Error), "approv") {
			t.Fatalf("refused apply job's error does not mention approval: %+v", j)
		}
		if log := demoGetText(t, fmt.Sprintf("%s/api/v1/jobs/%d/log", m.URL, j.ID)); strings.Contains(log, "Apply complete") {
			t.Fatalf("refused apply ran Terraform:\n%s", log)
		}
	}
	pendingProd := false
	for _, p := range demoPull(t, m).Plans {
		pendingProd = pendingProd || (p.JobID == prod.ID && p.AppliedAt == nil)
	}
	if !pendingProd {
		t.Fatalf("production's plan is no longer pending after the refused apply: %+v", demoPull(t, m).Plans)
	}

	// Staging has no requirement: it applies.
	demoComment(t, m, "atlantis apply -p staging")
	apply := demoWaitJob(t, m, atoll.JobApply, "staging")
	if apply.State != atoll.JobSucceeded {
		t.Fatalf("staging apply = %+v\n%s", apply, dumpComments(t, m))
	}
	demoWaitLog(t, m, apply.ID, "Apply complete")

	// A bad command is answered with usage, in the conversation.
	demoWaitIdle(t, m)
	n = len(demoComments(t, m))
	demoComment(t, m, "atlantis plan -w ../x")
	usage := demoWaitReply(t, m, n, "usage reply")
	t.Logf("reply to a bad command:\n%s", usage)
	if !strings.Contains(strings.ToLower(usage), "usage") {
		t.Fatalf("reply to a bad command has no usage:\n%s", usage)
	}

	// Bad JSON is a 400 with a JSON error.
	for _, raw := range []string{`{"body":`, `{"bogus":"x"}`, `{"body":"   "}`} {
		status, out := demoPostComment(t, m, raw)
		if msg, _ := out["error"].(string); status != http.StatusBadRequest || msg == "" {
			t.Fatalf("POST %s = %d %v, want 400 with an error", raw, status, out)
		}
	}

	// Unlock releases every lock of the pull request.
	demoComment(t, m, "atlantis unlock")
	eventually(t, 60*time.Second, "locks released", func() bool { return len(demoLocks(t, m)) == 0 })
	if metrics := demoGetText(t, m.URL+"/metrics"); !strings.Contains(metrics, "\natoll_locks 0\n") {
		t.Fatalf("metrics after unlock:\n%s", metrics)
	}
	demoWaitIdle(t, m)

	// A restart on the same data dir keeps everything and seeds nothing.
	var jobsBefore []atoll.Job
	getJSON(t, m.URL+"/api/v1/jobs", &jobsBefore)
	commentsBefore := len(demoComments(t, m))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = startDemo(t, dataDir)
	getJSON(t, m.URL+"/api/v1/pulls", &pulls)
	if len(pulls) != 1 || pulls[0].Number != 1 {
		t.Fatalf("pulls after restart = %+v, want only #1", pulls)
	}
	time.Sleep(time.Second) // a re-seeded autoplan would be queued by now
	var jobsAfter []atoll.Job
	getJSON(t, m.URL+"/api/v1/jobs", &jobsAfter)
	before, _ := json.Marshal(jobsBefore)
	after, _ := json.Marshal(jobsAfter)
	if !bytes.Equal(before, after) {
		t.Fatalf("jobs changed across restart:\nbefore %s\nafter  %s", before, after)
	}
	if n := len(demoComments(t, m)); n != commentsBefore {
		t.Fatalf("comments after restart = %d, want %d\n%s", n, commentsBefore, dumpComments(t, m))
	}
	if locks := demoLocks(t, m); len(locks) != 0 {
		t.Fatalf("locks after restart = %+v", locks)
	}
	if metrics := demoGetText(t, m.URL+"/metrics"); !strings.Contains(metrics, `atoll_requests{state="queued"} 0`) {
		t.Fatalf("requests queued after restart:\n%s", metrics)
	}
}

// The demo's API is open, so a page on any other site could post a form
// (or a text/plain fetch) to it and apply its plan. Such requests are
// refused; nothing is applied.
func TestDemoRefusesCrossSiteRequests(t *testing.T) {
	testEnv(t)
	m := startDemo(t, t.TempDir())
	demoWaitIdle(t, m) // the autoplan made plans there would be to apply
	apply := `{"Repository":"demo/infra","PR":1}`
	attacks := []struct {
		name, path, contentType, body string
		header                        map[string]string
		status                        int
	}{
		{"form-like fetch from another site", "/api/v1/apply", "text/plain", apply,
			map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"text/plain without browser headers", "/api/v1/apply", "text/plain", apply, nil, http.StatusUnsupportedMediaType},
		{"form post of a comment", demoPullPath + "/comments", "application/x-www-form-urlencoded", "body=atlantis+apply",
			map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"form post without Origin", demoPullPath + "/comments", "application/x-www-form-urlencoded", "body=atlantis+apply", nil, http.StatusUnsupportedMediaType},
	}
	for _, a := range attacks {
		req, _ := http.NewRequest("POST", m.URL+a.path, strings.NewReader(a.body))
		req.Header.Set("Content-Type", a.contentType)
		for k, v := range a.header {
			req.Header.Set(k, v)
		}
		resp, err := authClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != a.status || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: status %d %s; want %d with an error", a.name, resp.StatusCode, body, a.status)
		}
	}
	demoWaitIdle(t, m)
	if jobs := demoJobs(t, m, atoll.JobApply); len(jobs) != 0 {
		t.Fatalf("cross-site requests applied: %+v", jobs)
	}
}

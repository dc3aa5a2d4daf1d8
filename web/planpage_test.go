package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/planview/plantest"
	"github.com/atollhq/atoll/store"
)

const (
	webOldSecret = "OLD-web-secret-1"
	webNewSecret = "NEW-web-secret-2"
)

func planTF(v2 bool) string {
	name, extra := "app", `resource "terraform_data" "old" { input = "x" }`
	if v2 {
		name, extra = "app2", ""
	}
	return `
variable "token" {
  type      = string
  sensitive = true
}
resource "terraform_data" "app" {
  input = { name = "` + name + `", token = var.token }
}
output "token" {
  value     = var.token
  sensitive = true
}
output "name" { value = "` + name + `" }
` + extra
}

// addPlan stores a succeeded plan job of dir with real show -json output
// and its text as the job's log (one line coloured, as terraform prints).
func (f *pullFixture) addPlan(t *testing.T, dir string, show []byte, text string) (planID, jobID int64) {
	t.Helper()
	ctx := context.Background()
	err := f.db.Update(ctx, func(tx *store.Tx) error {
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projects[dir], HeadSHA: newHead, User: "carol"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		if err := tx.StartJob(j.ID); err != nil {
			return err
		}
		jobID = j.ID
		p := &atoll.Plan{JobID: j.ID, PullID: f.pullID, ProjectID: j.ProjectID, HeadSHA: newHead, Summary: atoll.Summary{Change: 1, Destroy: 1}, File: []byte("real"), ShowJSON: show}
		if err := tx.InsertPlan(p); err != nil {
			return err
		}
		planID = p.ID
		return tx.FinishJob(j.ID, atoll.JobSucceeded, "", &p.Summary)
	})
	if err != nil {
		t.Fatal(err)
	}
	var lines []atoll.LogLine
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "Plan:") {
			l = "\x1b[1m" + l + "\x1b[0m"
		}
		lines = append(lines, atoll.LogLine{JobID: jobID, Seq: int64(i + 1), Stream: atoll.StreamStdout, Time: time.Now().UTC(), Text: l})
	}
	if err := f.db.AppendLogs(ctx, lines); err != nil {
		t.Fatal(err)
	}
	return planID, jobID
}

func TestPlanPage(t *testing.T) {
	show, text := plantest.ShowJSON(t,
		plantest.Step{Files: map[string]string{"main.tf": planTF(false)}, Vars: map[string]string{"token": webOldSecret}, Apply: true},
		plantest.Step{Files: map[string]string{"main.tf": planTF(true)}, Vars: map[string]string{"token": webNewSecret}},
	)
	for _, s := range []string{webOldSecret, webNewSecret} {
		if !strings.Contains(string(show), s) {
			t.Fatalf("terraform's JSON lacks %q: the redaction checks would prove nothing", s)
		}
	}
	f := newPullFixture(t)
	planID, jobID := f.addPlan(t, "ready", show, text)

	rec := f.do(t, "GET", "/plans/"+itoa(planID), "", "", vera)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	page := rec.Body.String()
	wantContains(t, page,
		// Header.
		`href="/repos/acme/infra/pulls/7"`, "acme/infra#7", "<b>ready</b>", "ready/default", "bbbbbbb",
		`class="badge badge-plan-applicable"`, "Ready to apply.", `href="/jobs/`+itoa(jobID)+`"`, "by carol",
		`id="approval-`,
		// Resource changes with their symbols and attribute diff.
		`<span class="sym chg">~</span>`, "terraform_data.app", `<span class="sym del">-</span>`, "terraform_data.old",
		`<span class="name mono">name</span>`, "&#34;app&#34;", "&#34;app2&#34;",
		`<span class="name mono">token</span>`, `<pre class="val sensitive">(sensitive value)</pre>`,
		`<pre class="val unknown">(known after apply)</pre>`,
		// Unchanged attributes are collapsed.
		`<details class="same"><summary>1 unchanged attribute</summary>`,
		// Outputs, the sensitive one redacted.
		"Output changes", `<span class="badge">sensitive</span>`,
		// The plan's text, without terminal escapes.
		`<details class="card raw">`, "Plan: 0 to add, 1 to change, 1 to destroy.")
	for _, s := range []string{webOldSecret, webNewSecret, "\x1b["} {
		if strings.Contains(page, s) {
			t.Errorf("plan page contains %q", s)
		}
	}

	rec = f.do(t, "GET", "/api/v1/plans/"+itoa(planID), "", "", vera)
	if rec.Code != http.StatusOK {
		t.Fatalf("API status %d: %s", rec.Code, rec.Body)
	}
	for _, s := range []string{webOldSecret, webNewSecret} {
		if strings.Contains(rec.Body.String(), s) {
			t.Errorf("plan API contains %q", s)
		}
	}
	var out struct {
		Plan struct {
			ID      int64  `json:"id"`
			HeadSHA string `json:"head_sha"`
		} `json:"plan"`
		Repo    string `json:"repo"`
		Pull    int    `json:"pull"`
		State   string `json:"state"`
		Changes struct {
			Resources []struct {
				Address, Action, Symbol string
			} `json:"resource_changes"`
			Outputs []struct {
				Name      string
				Sensitive bool
			} `json:"output_changes"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Plan.ID != planID || out.Repo != "acme/infra" || out.Pull != 7 || out.State != "applicable" || out.Plan.HeadSHA != newHead {
		t.Errorf("API header %+v", out)
	}
	got := map[string]string{}
	for _, r := range out.Changes.Resources {
		got[r.Address] = r.Action + " " + r.Symbol
	}
	if got["terraform_data.app"] != "update ~" || got["terraform_data.old"] != "delete -" {
		t.Errorf("API resources %v", got)
	}
	if len(out.Changes.Outputs) != 2 || out.Changes.Outputs[1].Name != "token" || !out.Changes.Outputs[1].Sensitive {
		t.Errorf("API outputs %+v", out.Changes.Outputs)
	}

	// The plan this one replaced says so; the pull request page links the new one.
	old := f.do(t, "GET", "/plans/"+itoa(f.plans["ready"]), "", "", vera).Body.String()
	wantContains(t, old, `class="badge badge-plan-discarded"`, "Replaced by a newer plan, #"+itoa(planID)+".")
	pull := f.do(t, "GET", "/repos/acme/infra/pulls/7", "", "", vera).Body.String()
	wantContains(t, row(t, pull, f.projects["ready"]), `href="/plans/`+itoa(planID)+`"`)
}

func TestPlanPageStates(t *testing.T) {
	f := newPullFixture(t)
	for dir, want := range map[string]string{
		"stale":    "Planned on aaaaaaa, an older commit than the head bbbbbbb",
		"applied":  "Already applied",
		"unlocked": "Discarded when the project&#39;s lock was released",
	} {
		page := f.do(t, "GET", "/plans/"+itoa(f.plans[dir]), "", "", vera).Body.String()
		wantContains(t, page, want, "No resource changes.")
	}
	// A plan whose JSON cannot be read still has its page and its text.
	planID, _ := f.addPlan(t, "stale", []byte("not JSON"), "Plan: 1 to add, 0 to change, 0 to destroy.")
	rec := f.do(t, "GET", "/plans/"+itoa(planID), "", "", vera)
	if rec.Code != http.StatusOK {
		t.Fatalf("unreadable plan: status %d", rec.Code)
	}
	wantContains(t, rec.Body.String(), "Atoll cannot read this plan&#39;s JSON; its text is below.", "Plan: 1 to add, 0 to change, 0 to destroy.")
	rec = f.do(t, "GET", "/api/v1/plans/"+itoa(planID), "", "", vera)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"changes": null`) || !strings.Contains(rec.Body.String(), "cannot read") {
		t.Errorf("unreadable plan API: %d %s", rec.Code, rec.Body)
	}
}

// A plan told on its own summary has no JSON for a moment: the page says
// the resource view follows, then shows it once stored; a plan whose JSON
// never came says why.
func TestPlanPageJSONFollows(t *testing.T) {
	show, text := plantest.ShowJSON(t, plantest.Step{Files: map[string]string{"main.tf": planTF(false)}, Vars: map[string]string{"token": webOldSecret}})
	f := newPullFixture(t)
	planID, _ := f.addPlan(t, "ready", nil, text)
	page := func() string {
		rec := f.do(t, "GET", "/plans/"+itoa(planID), "", "", vera)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	wantContains(t, page(), "resource view is being made", "Plan: ")
	f.srv.Now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	wantContains(t, page(), "This plan has no resource view: the request that made it was canceled or its server stopped")
	if err := f.db.StorePlanJSON(context.Background(), planID, show); err != nil {
		t.Fatal(err)
	}
	got := page()
	wantContains(t, got, `<span class="sym add">+</span>`, "terraform_data.app")
	if strings.Contains(got, "resource view") {
		t.Errorf("the page still says the resource view is missing")
	}
}

func TestPlanPageErrors(t *testing.T) {
	f := newPullFixture(t)
	for _, tc := range []struct {
		path   string
		status int
		msg    string
		json   bool
	}{
		{"/plans/999", http.StatusNotFound, "Plan 999 not found.", false},
		{"/plans/abc", http.StatusBadRequest, "Invalid id", false},
		{"/plans/0", http.StatusBadRequest, "Invalid id", false},
		{"/api/v1/plans/999", http.StatusNotFound, "Plan 999 not found.", true},
		{"/api/v1/plans/x", http.StatusBadRequest, "Invalid id", true},
	} {
		rec := f.do(t, "GET", tc.path, "", "", vera)
		ct := rec.Header().Get("Content-Type")
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.msg) || strings.Contains(ct, "json") != tc.json {
			t.Errorf("%s: %d %q %s", tc.path, rec.Code, ct, rec.Body)
		}
	}
}

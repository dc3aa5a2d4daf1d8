package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/mock"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// driftProjectID is the id of the fixture's project at dir.
func (f *driftPageFixture) driftProjectID(t *testing.T, dir string) int64 {
	t.Helper()
	projects, err := f.db.DriftProjects(context.Background(), atoll.DriftFilter{Repo: "acme/infra"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		if p.Dir == dir {
			return p.ProjectID
		}
	}
	t.Fatalf("no drift state of %s in %+v", dir, projects)
	return 0
}

// pendingPlan stores a plan of the project at dir on the drift target, as
// a reconcile's plan job leaves it, and returns its id.
func (f *driftPageFixture) pendingPlan(t *testing.T, dir string) int64 {
	t.Helper()
	projectID := f.driftProjectID(t, dir)
	var planID int64
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		job := &atoll.Job{Kind: atoll.JobPlan, PullID: f.targetID, ProjectID: projectID, HeadSHA: "0123456789abcdef", User: "olga"}
		if err := tx.InsertJob(job); err != nil {
			return err
		}
		p := &atoll.Plan{JobID: job.ID, PullID: f.targetID, ProjectID: projectID, HeadSHA: "0123456789abcdef",
			File: []byte("reconcile plan"), ShowJSON: []byte("{}"), Summary: atoll.Summary{Add: 1, Change: 2}}
		if err := tx.InsertUnlockedPlan(p); err != nil {
			return err
		}
		planID = p.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return planID
}

// Each project links to the history of its checks at its branch, shown
// above the table: when, state, counts or error, the commit and the plan
// job. A bad project id is a 400; an unknown project has an empty
// history.
func TestDriftHistory(t *testing.T) {
	f := newDriftPageFixture(t)
	h := quietServer(&web.Server{DB: f.db})
	viewer := &atoll.User{Name: "vera", Role: atoll.RoleViewer}
	staging, prod := f.driftProjectID(t, "staging"), f.driftProjectID(t, "envs/prod")
	historyOf := func(id int64) string {
		return "/drift?repo=acme%2Finfra&project=" + strconv.FormatInt(id, 10) + "&branch=main"
	}

	body := serveAs(h, viewer, "GET", "/drift").Body.String()
	wantContains(t, body, `href="`+strings.ReplaceAll(historyOf(staging), "&", "&amp;")+`"`, `href="`+strings.ReplaceAll(historyOf(prod), "&", "&amp;")+`"`)
	if strings.Contains(body, `id="drift-history"`) {
		t.Error("the drift page shows a history nobody asked for")
	}

	rec := serveAs(h, viewer, "GET", historyOf(staging))
	body = rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("staging's history = %d %s", rec.Code, body)
	}
	wantContains(t, body, `id="drift-history"`, `History of <span class="mono">staging</span> at <span class="mono">main</span>`,
		`href="/jobs/`+strconv.FormatInt(f.stagingJob, 10)+`">job #`+strconv.FormatInt(f.stagingJob, 10)+`</a>`,
		"<time datetime=")
	history := body[strings.Index(body, `id="drift-history"`):strings.Index(body, "</section>")]
	wantContains(t, history, `<span class="badge badge-drifted">drifted</span>`, `<span class="add">+1</span>`, "changed outside Terraform")
	// The live section keeps the history.
	wantContains(t, body, `hx-get="`+strings.ReplaceAll(historyOf(staging), "&", "&amp;")+`&amp;section=drift"`)
	rec = serveAs(h, viewer, "GET", historyOf(staging)+"&state=drifted&section=drift")
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "<html") || !strings.Contains(rec.Body.String(), `id="drift-history"`) {
		t.Errorf("history section = %d %s", rec.Code, rec.Body)
	}

	// A failed check: its error.
	body = serveAs(h, viewer, "GET", historyOf(prod)).Body.String()
	wantContains(t, body, `History of <span class="mono">prod</span>`, "check failed", "Error: no &lt;credentials&gt;",
		`href="/jobs/`+strconv.FormatInt(f.prodJob, 10)+`"`)

	// Newest first, every check kept.
	repo, err := f.db.Repo(context.Background(), f.repoID)
	if err != nil {
		t.Fatal(err)
	}
	req, err := f.db.QueueDrift(context.Background(), atoll.DriftCheck{Repo: *repo, Branch: "main", User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var second int64
	err = f.db.Update(context.Background(), func(tx *store.Tx) error {
		// The branch head this check resolved.
		if _, err := tx.UpsertPull(f.repoID, atoll.Pull{Number: f.targetNumber, HeadSHA: "aaaaaaa1111111", State: atoll.PullDrift}); err != nil {
			return err
		}
		job := &atoll.Job{Kind: atoll.JobPlan, PullID: f.targetID, ProjectID: staging, HeadSHA: "aaaaaaa1111111", User: "alice"}
		if err := tx.InsertJob(job); err != nil {
			return err
		}
		second = job.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.RecordDrift(context.Background(), req.ID, []atoll.DriftResult{{JobID: second, ProjectID: staging, State: atoll.DriftInSync}}, nil); err != nil {
		t.Fatal(err)
	}
	body = serveAs(h, viewer, "GET", historyOf(staging)).Body.String()
	newer, older := strings.Index(body, `href="/jobs/`+strconv.FormatInt(second, 10)+`"`), strings.Index(body, `href="/jobs/`+strconv.FormatInt(f.stagingJob, 10)+`"`)
	if newer < 0 || older < 0 || newer > older {
		t.Errorf("history order: newer at %d, older at %d", newer, older)
	}
	history = body[strings.Index(body, `id="drift-history"`):strings.Index(body, "</section>")]
	wantContains(t, history, `<span class="mono">aaaaaaa</span>`, `<span class="badge badge-succeeded">in sync</span>`, `<span class="badge badge-drifted">drifted</span>`)
	if strings.Contains(history, "aaaaaaa1") {
		t.Error("the history shows the whole commit")
	}

	// Unknown project: an empty history; a bad id: 400.
	rec = serveAs(h, viewer, "GET", "/drift?repo=acme/infra&project=999999&branch=main")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `id="no-drift-history"`) || !strings.Contains(rec.Body.String(), "No check of project 999999 at main") {
		t.Errorf("unknown project = %d %s", rec.Code, rec.Body)
	}
	rec = serveAs(h, viewer, "GET", "/drift?repo=acme/infra&project="+strconv.FormatInt(staging, 10)+"&branch=release")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "No check of staging at release") {
		t.Errorf("another branch = %d %s", rec.Code, rec.Body)
	}
	for _, path := range []string{"/drift?project=abc&branch=main", "/drift?project=-1&branch=main", "/drift?project=&branch=main", "/drift?project=1"} {
		if rec := serveAs(h, viewer, "GET", path); rec.Code != 400 || !strings.Contains(rec.Body.String(), "<html") {
			t.Errorf("%s = %d", path, rec.Code)
		}
	}
}

// Reconcile: an operator asks for a drifted project's reconcile (a
// fresh plan with Reconcile) through s.Drift; its pending plan is linked
// from the row, and once approved the row's "Apply" posts its apply.
// Refusals queue nothing; viewers are refused; without drift checks, 404.
func TestDriftReconcileButtons(t *testing.T) {
	f := newDriftPageFixture(t)
	var got []atoll.DriftCheck
	var fail error
	d := &mock.Drifter{CheckDriftFn: func(_ context.Context, c atoll.DriftCheck) (*atoll.Request, error) {
		if fail != nil {
			return nil, fail
		}
		got = append(got, c)
		return &atoll.Request{ID: 99, Kind: atoll.RequestDrift, Repo: c.Repo.FullName()}, nil
	}}
	h := quietServer(&web.Server{DB: f.db, Drift: d})
	operator := &atoll.User{Name: "olga", Role: atoll.RoleOperator}
	viewer := &atoll.User{Name: "vera", Role: atoll.RoleViewer}

	// Only the drifted project has a Reconcile button; nothing to apply.
	body := serveAs(h, operator, "GET", "/drift?state=drifted").Body.String()
	wantContains(t, body, `action="/drift/reconcile"`, `<input type="hidden" name="back" value="/drift?state=drifted">`)
	if n := strings.Count(body, `action="/drift/reconcile"`); n != 1 {
		t.Errorf("%d Reconcile buttons, want 1 (staging)", n)
	}
	if n := strings.Count(serveAs(h, operator, "GET", "/drift").Body.String(), `action="/drift/reconcile"`); n != 1 {
		t.Errorf("%d Reconcile buttons on the whole page, want 1 (staging)", n)
	}
	if strings.Contains(body, "/drift/apply") || strings.Contains(body, "drift-plan-") {
		t.Error("Apply or a plan before any reconcile plan")
	}
	if body := serveAs(h, viewer, "GET", "/drift").Body.String(); strings.Contains(body, "/drift/reconcile") {
		t.Error("a viewer gets Reconcile")
	}
	if body := serveAs(quietServer(&web.Server{DB: f.db}), operator, "GET", "/drift").Body.String(); strings.Contains(body, "/drift/reconcile") {
		t.Error("Reconcile on a server without drift checks")
	}

	rec := postFormAs(h, operator, "/drift/reconcile", url.Values{"repo": {"acme/infra"}, "branch": {"main"}, "project": {"staging"}, "back": {"/drift?state=drifted"}}, "text/html")
	cookie, _ := url.QueryUnescape(rec.Header().Get("Set-Cookie"))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/drift?state=drifted" ||
		!strings.Contains(cookie, "Reconcile queued: a fresh plan of main; approve it on its plan page, then apply.") {
		t.Fatalf("reconcile = %d %v %q", rec.Code, rec.Header(), cookie)
	}
	rec = postFormAs(h, operator, "/drift/reconcile", url.Values{"repo": {"acme/infra"}, "branch": {"main"}, "project": {"staging"}}, "application/json")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"id": 99`) || !strings.Contains(rec.Body.String(), "Reconcile queued") {
		t.Fatalf("reconcile (JSON) = %d %s", rec.Code, rec.Body)
	}
	if len(got) != 2 {
		t.Fatalf("reconciles = %+v", got)
	}
	for i, c := range got {
		if !c.Reconcile || c.Apply || c.Repo.ID != f.repoID || c.Branch != "main" || len(c.Projects) != 1 || c.Projects[0] != "staging" ||
			c.User != "olga" || c.Source != "192.0.2.1" {
			t.Errorf("reconcile %d = %+v", i, c)
		}
	}

	// The reconcile's plan, pending: linked, waiting for an approval, no
	// Apply.
	planID := f.pendingPlan(t, "staging")
	plan := strconv.FormatInt(planID, 10)
	for _, u := range []*atoll.User{operator, viewer} {
		body = serveAs(h, u, "GET", "/drift").Body.String()
		wantContains(t, body, `id="drift-plan-`+plan+`"`, `href="/plans/`+plan+`">plan #`+plan+`</a>`, "waits for an approval")
		if strings.Contains(body, "/drift/apply") {
			t.Errorf("Apply for %s before the approval", u.Name)
		}
	}

	// Approved: Apply, for operators.
	if _, err := f.db.DecidePlan(context.Background(), atoll.PlanDecision{PlanID: planID, Decision: atoll.DecisionApprove, User: "bob", Reason: "fine", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	body = serveAs(h, operator, "GET", "/drift").Body.String()
	wantContains(t, body, `href="/plans/`+plan+`"`, " approved", `action="/drift/apply"`)
	if n := strings.Count(body, `action="/drift/apply"`); n != 1 {
		t.Errorf("%d Apply buttons, want 1", n)
	}
	if body := serveAs(h, viewer, "GET", "/drift").Body.String(); strings.Contains(body, "/drift/apply") || !strings.Contains(body, " approved") {
		t.Error("a viewer gets Apply, or is not told of the approval")
	}

	got = nil
	rec = postFormAs(h, operator, "/drift/apply", url.Values{"repo": {"acme/infra"}, "branch": {"main"}, "project": {"staging"}, "back": {"/drift"}}, "text/html")
	cookie, _ = url.QueryUnescape(rec.Header().Get("Set-Cookie"))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/drift" || !strings.Contains(cookie, "queued") {
		t.Fatalf("apply = %d %v %q", rec.Code, rec.Header(), cookie)
	}
	if len(got) != 1 || !got[0].Apply || got[0].Reconcile || got[0].Branch != "main" || len(got[0].Projects) != 1 || got[0].Projects[0] != "staging" ||
		got[0].User != "olga" || got[0].Repo.ID != f.repoID {
		t.Fatalf("apply = %+v", got)
	}

	// A reject after the approval takes Apply away.
	if _, err := f.db.DecidePlan(context.Background(), atoll.PlanDecision{PlanID: planID, Decision: atoll.DecisionReject, User: "bob", Reason: "no", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if body := serveAs(h, operator, "GET", "/drift").Body.String(); strings.Contains(body, "/drift/apply") {
		t.Error("Apply after a reject")
	}

	// Refusals: shown back on the page, nothing queued.
	got = nil
	for _, path := range []string{"/drift/reconcile", "/drift/apply"} {
		for _, tt := range []struct {
			form url.Values
			fail error
			want string
		}{
			{url.Values{"repo": {"nobody/nothing"}, "branch": {"main"}, "project": {"staging"}}, nil, "not found"},
			{url.Values{"repo": {"acme/infra"}, "project": {"staging"}}, nil, "needs a repository"},
			{url.Values{"repo": {"acme/infra"}, "branch": {"main"}}, nil, "and a project"},
			{url.Values{"repo": {"acme/infra"}, "branch": {"main"}, "project": {"staging"}}, atoll.Errorf(atoll.EFORBIDDEN, "Repository is not in --repo-allowlist."), "allowlist"},
		} {
			fail = tt.fail
			rec := postFormAs(h, operator, path, tt.form, "text/html")
			cookie := rec.Header().Get("Set-Cookie")
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/drift" || !strings.Contains(cookie, "error") {
				t.Errorf("%s %v = %d %v", path, tt.form, rec.Code, rec.Header())
			}
			if v, _ := url.QueryUnescape(cookie); !strings.Contains(v, tt.want) {
				t.Errorf("%s %v: flash %q lacks %q", path, tt.form, v, tt.want)
			}
		}
		fail = nil

		// A viewer is refused; without drift checks: 404.
		form := url.Values{"repo": {"acme/infra"}, "branch": {"main"}, "project": {"staging"}}
		if rec := postFormAs(h, viewer, path, form, "application/json"); rec.Code != 403 {
			t.Errorf("viewer %s = %d", path, rec.Code)
		}
		none := quietServer(&web.Server{DB: f.db})
		if rec := postFormAs(none, operator, path, form, "application/json"); rec.Code != 404 {
			t.Errorf("%s without drift = %d %s", path, rec.Code, rec.Body)
		}
	}
	if len(got) != 0 {
		t.Errorf("refused calls queued %+v", got)
	}
}

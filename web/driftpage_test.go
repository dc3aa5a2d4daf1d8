package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/mock"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// driftPageFixture is a page fixture (acme/infra #7) with a drift check of
// branch main recorded: staging drifted, prod's check failed, dev in sync.
type driftPageFixture struct {
	*pageFixture
	targetID            int64
	stagingJob, prodJob int64
	targetNumber        int
}

func newDriftPageFixture(t *testing.T) *driftPageFixture {
	t.Helper()
	ctx := context.Background()
	f := &driftPageFixture{pageFixture: newPageFixture(t)}
	repo, err := f.db.Repo(ctx, f.repoID)
	if err != nil {
		t.Fatal(err)
	}
	req, err := f.db.QueueDrift(ctx, atoll.DriftCheck{Repo: *repo, Branch: "main", User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f.targetID = req.PullID
	var results []atoll.DriftResult
	err = f.db.Update(ctx, func(tx *store.Tx) error {
		target, err := tx.Pull(f.targetID)
		if err != nil {
			return err
		}
		f.targetNumber = target.Number
		for _, p := range []struct {
			project atoll.Project
			result  atoll.DriftResult
		}{
			{atoll.Project{Dir: "staging", Workspace: "default"}, atoll.DriftResult{State: atoll.DriftDrifted, Add: 1, Change: 2, ChangedOutside: true}},
			{atoll.Project{Name: "prod", Dir: "envs/prod", Workspace: "default"}, atoll.DriftResult{State: atoll.DriftFailed, Error: "Error: no <credentials>"}},
			{atoll.Project{Dir: "dev", Workspace: "blue"}, atoll.DriftResult{State: atoll.DriftInSync}},
		} {
			projectID, err := tx.UpsertProject(f.repoID, p.project)
			if err != nil {
				return err
			}
			job := &atoll.Job{Kind: atoll.JobPlan, PullID: f.targetID, ProjectID: projectID, HeadSHA: "fedcba9876543210", User: "alice"}
			if err := tx.InsertJob(job); err != nil {
				return err
			}
			if err := tx.StartJob(job.ID); err != nil {
				return err
			}
			if err := tx.FinishJob(job.ID, atoll.JobSucceeded, "", &atoll.Summary{Add: p.result.Add, Change: p.result.Change}); err != nil {
				return err
			}
			r := p.result
			r.JobID, r.ProjectID = job.ID, projectID
			results = append(results, r)
			switch p.project.Dir {
			case "staging":
				f.stagingJob = job.ID
			case "envs/prod":
				f.prodJob = job.ID
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.RecordDrift(ctx, req.ID, results, nil); err != nil {
		t.Fatal(err)
	}
	return f
}

func quietServer(s *web.Server) http.Handler {
	s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return s.Handler()
}

// postFormAs posts form to path as u, as a browser's form would.
func postFormAs(h http.Handler, u *atoll.User, path string, form url.Values, accept string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req = req.WithContext(atoll.NewContextWithUser(req.Context(), u))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// The drift page shows every project's drift state by repository and
// branch, with a count per state, the last check's job, the counts and a
// failed check's error; its filters narrow it, a bad state is a 400.
func TestDriftPage(t *testing.T) {
	f := newDriftPageFixture(t)
	h := quietServer(&web.Server{DB: f.db})
	viewer := &atoll.User{Name: "vera", Role: atoll.RoleViewer}
	rec := serveAs(h, viewer, "GET", "/drift")
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("drift page = %d %s", rec.Code, body)
	}
	wantContains(t, body, "<h1>Drift</h1>", `data-live-topics="drift"`, `hx-get="/drift?section=drift"`,
		`href="/drift?repo=acme%2Finfra"`, "main",
		`id="drift-count-drifted"`, "drifted 1", "check failed 1", "in sync 1",
		">staging<", ">prod<", "envs/prod", "dev (blue)",
		`href="/jobs/`+strconv.FormatInt(f.stagingJob, 10)+`"`, `href="/jobs/`+strconv.FormatInt(f.prodJob, 10)+`"`,
		`<span class="add">+1</span>`, `<span class="chg">~2</span>`, "changed outside Terraform",
		"Error: no &lt;credentials&gt;")
	if strings.Contains(body, "/drift/check") {
		t.Error("the drift page offers Check now without drift checks")
	}
	if strings.Contains(body, `<a href="/drift">Drift</a>`) {
		t.Error("the header links the drift page on a server without drift checks")
	}

	rec = serveAs(h, viewer, "GET", "/drift?state=drifted")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), ">staging<") || strings.Contains(rec.Body.String(), "no &lt;credentials") ||
		!strings.Contains(rec.Body.String(), "check failed 1") {
		t.Errorf("drifted only = %d %s", rec.Code, rec.Body)
	}
	rec = serveAs(h, viewer, "GET", "/drift?repo=acme/infra&state=drifted&section=drift")
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "<html") || !strings.Contains(rec.Body.String(), ">staging<") {
		t.Errorf("drift section = %d %s", rec.Code, rec.Body)
	}
	rec = serveAs(h, viewer, "GET", "/drift?repo=other/repo")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "No project has been checked for drift yet.") {
		t.Errorf("other repository = %d %s", rec.Code, rec.Body)
	}
	for _, path := range []string{"/drift?state=bogus", "/drift?section=nope"} {
		if rec := serveAs(h, viewer, "GET", path); rec.Code != 400 || !strings.Contains(rec.Body.String(), "<html") {
			t.Errorf("%s = %d", path, rec.Code)
		}
	}

	// The overview counts the drifted projects.
	rec = serveAs(h, viewer, "GET", "/?section=node")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `href="/drift?state=drifted"`) || !strings.Contains(rec.Body.String(), "1 drifted project") {
		t.Errorf("overview node section = %d %s", rec.Code, rec.Body)
	}
}

// A drift target is no pull request: no list of pull requests shows it,
// its number has no pull request page, and its jobs link to the drift
// page.
func TestDriftTargetIsNoPullRequest(t *testing.T) {
	f := newDriftPageFixture(t)
	h := quietServer(&web.Server{DB: f.db})
	viewer := &atoll.User{Name: "vera", Role: atoll.RoleViewer}
	number := strconv.Itoa(f.targetNumber)
	pullPath := "/repos/acme/infra/pulls/" + number
	for _, path := range []string{"/", "/?section=pulls", "/runs", "/jobs/" + strconv.FormatInt(f.stagingJob, 10), "/locks", "/api/v1/pulls"} {
		rec := serveAs(h, viewer, "GET", path)
		body := rec.Body.String()
		if rec.Code != 200 {
			t.Errorf("%s = %d %s", path, rec.Code, body)
			continue
		}
		if strings.Contains(body, pullPath) || strings.Contains(body, "#"+number) || strings.Contains(body, "Drift of main") {
			t.Errorf("%s shows the drift target as a pull request", path)
		}
	}
	for _, path := range []string{"/runs", "/jobs/" + strconv.FormatInt(f.stagingJob, 10)} {
		if body := serveAs(h, viewer, "GET", path).Body.String(); !strings.Contains(body, `href="/drift?repo=acme%2Finfra"`) {
			t.Errorf("%s does not link the drift job to the drift page", path)
		}
	}
	for _, path := range []string{pullPath, "/api/v1" + pullPath} {
		if rec := serveAs(h, viewer, "GET", path); rec.Code != 400 && rec.Code != 404 {
			t.Errorf("%s = %d; want no pull request", path, rec.Code)
		}
	}
}

// Check now: operators queue a drift check of a repository's branch, or
// of one project, through s.Drift; the page says so (or why not); without
// drift checks the route answers 404 and the page has no buttons.
func TestDriftCheckNow(t *testing.T) {
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

	body := serveAs(h, operator, "GET", "/drift").Body.String()
	wantContains(t, body, `<a href="/drift">Drift</a>`, `action="/drift/check"`, `name="repo" value="acme/infra"`, `name="branch" value="main"`,
		`name="project" value="staging"`, `name="project" value="prod"`, "Check now")
	if body := serveAs(h, viewer, "GET", "/drift").Body.String(); strings.Contains(body, "/drift/check") {
		t.Error("a viewer gets Check now")
	}

	// The whole branch, then one project; back on the drift page.
	rec := postFormAs(h, operator, "/drift/check", url.Values{"repo": {"ACME/infra"}, "branch": {"main"}, "back": {"/drift?state=drifted"}}, "text/html")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/drift?state=drifted" || !strings.Contains(rec.Header().Get("Set-Cookie"), "queued") {
		t.Fatalf("check now = %d %v", rec.Code, rec.Header())
	}
	rec = postFormAs(h, operator, "/drift/check", url.Values{"repo": {"acme/infra"}, "branch": {"main"}, "project": {"staging"}}, "application/json")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"id": 99`) {
		t.Fatalf("check now (JSON) = %d %s", rec.Code, rec.Body)
	}
	if len(got) != 2 {
		t.Fatalf("checks = %+v", got)
	}
	for i, c := range got {
		if c.Repo.ID != f.repoID || c.Repo.FullName() != "acme/infra" || c.Branch != "main" || c.User != "olga" || c.Source != "192.0.2.1" {
			t.Errorf("check %d = %+v", i, c)
		}
	}
	if len(got[0].Projects) != 0 || len(got[1].Projects) != 1 || got[1].Projects[0] != "staging" {
		t.Errorf("projects = %v, %v", got[0].Projects, got[1].Projects)
	}

	// Refusals: shown back on the page, nothing queued.
	got = nil
	for _, tt := range []struct {
		form url.Values
		fail error
		want string
	}{
		{url.Values{"repo": {"nobody/nothing"}, "branch": {"main"}}, nil, "not found"},
		{url.Values{"repo": {"acme/infra"}}, nil, "needs a repository"},
		{url.Values{"repo": {"acme/infra"}, "branch": {"main"}}, atoll.Errorf(atoll.EFORBIDDEN, "Repository is not in --repo-allowlist."), "allowlist"},
	} {
		fail = tt.fail
		rec := postFormAs(h, operator, "/drift/check", tt.form, "text/html")
		cookie := rec.Header().Get("Set-Cookie")
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/drift" || !strings.Contains(cookie, "error") {
			t.Errorf("%v = %d %v", tt.form, rec.Code, rec.Header())
		}
		if v, _ := url.QueryUnescape(cookie); !strings.Contains(v, tt.want) {
			t.Errorf("%v: flash %q lacks %q", tt.form, v, tt.want)
		}
	}
	fail = nil
	if len(got) != 0 {
		t.Errorf("refused checks queued %+v", got)
	}

	// A viewer is refused; without drift checks: 404.
	if rec := postFormAs(h, viewer, "/drift/check", url.Values{"repo": {"acme/infra"}, "branch": {"main"}}, "application/json"); rec.Code != 403 {
		t.Errorf("viewer check = %d", rec.Code)
	}
	none := quietServer(&web.Server{DB: f.db})
	if rec := postFormAs(none, operator, "/drift/check", url.Values{"repo": {"acme/infra"}, "branch": {"main"}}, "application/json"); rec.Code != 404 {
		t.Errorf("check without drift = %d %s", rec.Code, rec.Body)
	}
}

package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/mock"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/web"
)

// driftFixture serves the drift API over a real store holding acme/infra
// (allowlisted, checked once on main: app drifted, net in sync, db failed)
// and other/repo (known, not allowlisted), with a mock drifter.
type driftFixture struct {
	db      *store.DB
	s       *web.Server
	h       http.Handler
	checks  []atoll.DriftCheck
	outcome *atoll.DriftOutcome
	reqID   int64
}

const driftSecret = "drift-secret"

func newDriftFixture(t *testing.T, detection, remediation bool) *driftFixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	f := &driftFixture{db: db}
	repo := atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra", CloneURL: "https://github.com/acme/infra.git"}
	req, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: repo, Branch: "main", User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	f.reqID = req.ID
	var results []atoll.DriftResult
	err = db.Update(ctx, func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(repo)
		if err != nil {
			return err
		}
		if _, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "other", Name: "repo"}); err != nil {
			return err
		}
		for _, p := range []struct {
			name, dir, state string
			add              int
		}{{"app", "app", atoll.DriftDrifted, 2}, {"net", "net", atoll.DriftInSync, 0}, {"db", "db", atoll.DriftFailed, 0}} {
			pid, err := tx.UpsertProject(repoID, atoll.Project{Name: p.name, Dir: p.dir, Workspace: "default"})
			if err != nil {
				return err
			}
			j := &atoll.Job{Kind: atoll.JobPlan, PullID: req.PullID, ProjectID: pid, RequestID: req.ID, User: "alice"}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			res := atoll.DriftResult{JobID: j.ID, ProjectID: pid, State: p.state, Add: p.add}
			if p.state == atoll.DriftFailed {
				res.Error = "terraform plan failed"
			}
			results = append(results, res)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RecordDrift(ctx, req.ID, results, nil); err != nil {
		t.Fatal(err)
	}
	f.outcome = &atoll.DriftOutcome{Request: &atoll.Request{ID: 77}, Branch: "main", HeadSHA: strings.Repeat("a", 40),
		Projects: []atoll.DriftProjectOutcome{
			{Job: &atoll.Job{Project: "app", Dir: "app", Workspace: "default"}, Result: atoll.DriftResult{State: atoll.DriftDrifted, Add: 1},
				Output: "Terraform will perform the following actions:\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n"},
			{Job: &atoll.Job{Project: "net", Dir: "net", Workspace: "default"}, Result: atoll.DriftResult{State: atoll.DriftInSync},
				Output: "No changes. Your infrastructure matches the configuration.\n"},
		}}
	drifter := &mock.Drifter{
		CheckDriftFn: func(ctx context.Context, c atoll.DriftCheck) (*atoll.Request, error) {
			if c.Repo.Owner != "acme" {
				return nil, atoll.Errorf(atoll.EFORBIDDEN, "not allowlisted")
			}
			f.checks = append(f.checks, c)
			return &atoll.Request{ID: 77}, nil
		},
		DriftOutcomeFn: func(ctx context.Context, id int64) (*atoll.DriftOutcome, error) { return f.outcome, nil },
	}
	f.s = &web.Server{DB: db, Drift: drifter, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), APISecret: driftSecret,
		DriftDetection: detection, DriftRemediation: remediation, Allowlist: runner.ParseAllowlist("github.com/acme/*")}
	f.h = f.s.Handler()
	return f
}

// driftAnswer is a decoded envelope.
type driftAnswer struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   *struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
	RequestID string `json:"request_id"`
	raw       string
	status    int
}

// call sends method path with body, with the API secret unless token says
// otherwise ("-": none).
func (f *driftFixture) call(t *testing.T, method, path, body, token string) driftAnswer {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	switch token {
	case "":
		r.Header.Set("X-Atlantis-Token", driftSecret)
	case "-":
	default:
		r.Header.Set("X-Atlantis-Token", token)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	a := driftAnswer{raw: w.Body.String(), status: w.Code}
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("%s %s: %d %s: %v", method, path, w.Code, w.Body, err)
	}
	if !strings.Contains(a.raw, `"request_id"`) || !strings.Contains(a.raw, `"timestamp"`) {
		t.Fatalf("%s %s: not an envelope: %s", method, path, a.raw)
	}
	return a
}

const (
	statusPath = "/api/drift/status?repository=acme/infra&type=Github"
	listPath   = "/api/drift/remediate?repository=acme/infra&type=Github"
	detectBody = `{"repository":"acme/infra","ref":"main","type":"Github"}`
)

// Every route refuses a missing or wrong credential, and answers 503 while
// off, in the envelope, before reading anything else.
func TestDriftAPIAuthAndDisabled(t *testing.T) {
	off := newDriftFixture(t, false, false)
	on := newDriftFixture(t, true, false)
	routes := []struct{ method, path, body, disabled string }{
		{"GET", statusPath, "", "drift detection is not enabled"},
		{"POST", "/api/drift/detect", detectBody, "drift detection is not enabled"},
		{"GET", listPath, "", "drift remediation is not enabled"},
		{"GET", "/api/drift/remediate/x?repository=acme/infra&type=Github", "", "drift remediation is not enabled"},
		{"POST", "/api/drift/remediate", detectBody, "drift remediation is not enabled"},
	}
	for _, rt := range routes {
		for _, tok := range []string{"-", "wrong"} {
			a := on.call(t, rt.method, rt.path, rt.body, tok)
			if a.status != 401 || a.Error == nil || a.Error.Code != "UNAUTHORIZED" || a.Error.Message != "invalid or missing API token" || !strings.Contains(a.raw, `"data":null`) {
				t.Errorf("%s %s token %q: %d %s", rt.method, rt.path, tok, a.status, a.raw)
			}
		}
		a := off.call(t, rt.method, rt.path, rt.body, "")
		if a.status != 503 || a.Error.Code != "SERVICE_UNAVAILABLE" || a.Error.Message != rt.disabled {
			t.Errorf("%s %s off: %d %s", rt.method, rt.path, a.status, a.raw)
		}
	}
	if len(on.checks)+len(off.checks) != 0 {
		t.Errorf("checks ran: %+v", on.checks)
	}
	// Other paths under /api/drift are not the drift API's: the gate
	// refuses them as any other.
	for _, p := range []string{"/api/drift", "/api/drift/other", "/api/drift/remediate/a/b"} {
		r := httptest.NewRequest("GET", p, nil)
		w := httptest.NewRecorder()
		on.h.ServeHTTP(w, r)
		if w.Code != 401 || strings.Contains(w.Body.String(), "request_id") {
			t.Errorf("GET %s: %d %s", p, w.Code, w.Body)
		}
	}
	// The client's request id is echoed.
	r := httptest.NewRequest("GET", statusPath, nil)
	r.Header.Set("X-Atlantis-Token", driftSecret)
	r.Header.Set("X-Request-ID", "abc-123")
	w := httptest.NewRecorder()
	on.h.ServeHTTP(w, r)
	if !strings.Contains(w.Body.String(), `"request_id":"abc-123"`) {
		t.Errorf("request id: %s", w.Body)
	}
}

// Validation, repository and allowlist refusals, in Atlantis's order, on
// each route.
func TestDriftAPIRefusals(t *testing.T) {
	f := newDriftFixture(t, true, false)
	cases := []struct {
		name, method, path, body string
		status                   int
		code, message, field     string
	}{
		{"status without repository", "GET", "/api/drift/status?type=Github", "", 400, "VALIDATION_ERROR", "missing required parameter", "repository"},
		{"status without type", "GET", "/api/drift/status?repository=acme/infra", "", 400, "VALIDATION_ERROR", "missing required parameter", "type"},
		{"status bad type", "GET", "/api/drift/status?repository=acme/infra&type=github", "", 400, "VALIDATION_ERROR", "invalid VCS type", "type"},
		{"status azure", "GET", "/api/drift/status?repository=acme/infra&type=AzureDevops", "", 400, "VALIDATION_ERROR", "unsupported VCS type", "type"},
		{"status gitlab", "GET", "/api/drift/status?repository=acme/infra&type=Gitlab", "", 400, "VALIDATION_ERROR", "unsupported VCS type", "type"},
		{"status bad repository", "GET", "/api/drift/status?repository=owner&type=Github", "", 400, "VALIDATION_ERROR", "invalid repository", "repository"},
		{"status unknown repository", "GET", "/api/drift/status?repository=acme/nope&type=Github", "", 404, "NOT_FOUND", "repository not found: acme/nope", ""},
		{"status not allowlisted", "GET", "/api/drift/status?repository=other/repo&type=Github", "", 403, "FORBIDDEN", "repository is not in the allowlist", ""},
		{"status bad path", "GET", statusPath + "&path=../x", "", 400, "VALIDATION_ERROR", "invalid path filter", "path"},
		{"detect bad json", "POST", "/api/drift/detect", `{"repository":1}`, 400, "VALIDATION_ERROR", "", ""},
		{"detect missing repository", "POST", "/api/drift/detect", `{"ref":"main","type":"Github"}`, 400, "VALIDATION_ERROR", "validation failed", "repository"},
		{"detect pull ref", "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"refs/pull/1/head","type":"Github"}`, 400, "VALIDATION_ERROR", "validation failed", "ref"},
		{"detect sha without base", "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"` + strings.Repeat("a", 40) + `","type":"Github"}`, 400, "VALIDATION_ERROR", "validation failed", "base_branch"},
		{"detect sha with base", "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"` + strings.Repeat("a", 40) + `","base_branch":"main","type":"Github"}`, 400, "VALIDATION_ERROR", "validation failed", "ref"},
		{"detect bad workspace", "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"main","type":"Github","paths":[{"directory":"app","workspace":"../../tmp/plan"}]}`, 400, "VALIDATION_ERROR", "validation failed", "paths"},
		{"detect both selectors", "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"main","type":"Github","projects":["app"],"paths":[{"directory":"app"}]}`, 400, "VALIDATION_ERROR", "validation failed", "paths"},
		{"detect gitlab", "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"main","type":"Gitlab"}`, 400, "VALIDATION_ERROR", "unsupported VCS type", "type"},
		{"detect not allowlisted", "POST", "/api/drift/detect", `{"repository":"other/repo","ref":"main","type":"Github"}`, 403, "FORBIDDEN", "repository is not in the allowlist", ""},
		{"detect unknown repository", "POST", "/api/drift/detect", `{"repository":"acme/nope","ref":"main","type":"Github"}`, 404, "NOT_FOUND", "repository not found: acme/nope", ""},
		{"remediate apply off", "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","action":"apply"}`, 503, "SERVICE_UNAVAILABLE", "drift remediation apply is not enabled", ""},
		{"remediate bad action", "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","action":"destroy"}`, 400, "VALIDATION_ERROR", "validation failed", "action"},
		{"remediate regex project", "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","projects":["app-.*"]}`, 400, "VALIDATION_ERROR", "validation failed", "projects"},
		{"remediate empty project", "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","projects":[""]}`, 400, "VALIDATION_ERROR", "validation failed", "projects"},
		{"list without type", "GET", "/api/drift/remediate?repository=acme/infra", "", 400, "VALIDATION_ERROR", "missing required parameter", "type"},
		{"list bad repository", "GET", "/api/drift/remediate?repository=owner&type=Github", "", 400, "VALIDATION_ERROR", "invalid repository", "repository"},
		{"get not allowlisted", "GET", "/api/drift/remediate/x?repository=other/repo&type=Github", "", 403, "FORBIDDEN", "repository is not in the allowlist", ""},
		{"get unknown id", "GET", "/api/drift/remediate/nope?repository=acme/infra&type=Github", "", 404, "NOT_FOUND", "remediation result not found: remediation result not found: nope", ""},
	}
	for _, limit := range []string{"5abc", "5+6", "abc", "", "0", "-1"} {
		cases = append(cases, struct {
			name, method, path, body string
			status                   int
			code, message, field     string
		}{"limit " + limit, "GET", listPath + "&limit=" + limit, "", 400, "VALIDATION_ERROR", "invalid limit parameter", "limit"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := f.call(t, c.method, c.path, c.body, "")
			if a.status != c.status || a.Error == nil || a.Error.Code != c.code || c.message != "" && a.Error.Message != c.message {
				t.Fatalf("%d %s", a.status, a.raw)
			}
			if c.field != "" && !strings.Contains(string(a.Error.Details), `"field":"`+c.field+`"`) {
				t.Fatalf("details %s, want field %s", a.Error.Details, c.field)
			}
		})
	}
	if len(f.checks) != 0 {
		t.Errorf("checks ran: %+v", f.checks)
	}
}

type statusData struct {
	Repository string `json:"repository"`
	Projects   []struct {
		ProjectName string `json:"project_name"`
		Directory   string `json:"directory"`
		Ref         string `json:"ref"`
		BaseBranch  string `json:"base_branch"`
		DetectionID string `json:"detection_id"`
		HasDrift    bool   `json:"has_drift"`
		Drift       *struct {
			ToAdd   int    `json:"to_add"`
			Summary string `json:"summary"`
		} `json:"drift"`
		PlanOutput string `json:"plan_output"`
		Error      string `json:"error"`
	} `json:"projects"`
	Summary struct {
		Total, Drift, Without, Errors int
	} `json:"-"`
	RawSummary map[string]int `json:"summary"`
	ID         string         `json:"id"`
}

func TestDriftAPIStatus(t *testing.T) {
	f := newDriftFixture(t, true, false)
	id := itoa(f.reqID)
	for _, c := range []struct {
		query string
		want  []string // directories
	}{
		{"", []string{"app", "db", "net"}},
		{"&project=app", []string{"app"}},
		{"&path=./net/", []string{"net"}},
		{"&workspace=default", []string{"app", "db", "net"}},
		{"&workspace=prod", nil},
		{"&ref=refs/heads/main", []string{"app", "db", "net"}},
		{"&ref=dev", nil},
		{"&base_branch=main", []string{"app", "db", "net"}},
	} {
		a := f.call(t, "GET", statusPath+c.query, "", "")
		var d statusData
		if a.status != 200 || !a.Success || json.Unmarshal(a.Data, &d) != nil || !strings.Contains(a.raw, `"error":null`) {
			t.Fatalf("%s: %d %s", c.query, a.status, a.raw)
		}
		var dirs []string
		for _, p := range d.Projects {
			dirs = append(dirs, p.Directory)
			if p.DetectionID != id || p.Ref != "main" || p.BaseBranch != "main" {
				t.Errorf("%s: project %+v, want detection id %s", c.query, p, id)
			}
			switch p.Directory {
			case "app":
				if !p.HasDrift || p.Drift == nil || p.Drift.ToAdd != 2 {
					t.Errorf("app %+v", p)
				}
			case "db":
				if p.HasDrift || p.Error != "terraform plan failed" {
					t.Errorf("db %+v", p)
				}
			case "net":
				if p.HasDrift || p.Drift != nil {
					t.Errorf("net %+v", p)
				}
			}
		}
		if strings.Join(dirs, ",") != strings.Join(c.want, ",") || d.Repository != "acme/infra" {
			t.Errorf("%s: %v, want %v", c.query, dirs, c.want)
		}
		if c.query == "" && (d.RawSummary["total_projects"] != 3 || d.RawSummary["projects_with_drift"] != 1 ||
			d.RawSummary["projects_with_errors"] != 1 || d.RawSummary["projects_without_drift"] != 1) {
			t.Errorf("summary %v", d.RawSummary)
		}
		if c.want == nil && !strings.Contains(a.raw, `"projects":[]`) {
			t.Errorf("%s: %s", c.query, a.raw)
		}
	}
}

func TestDriftAPIDetect(t *testing.T) {
	f := newDriftFixture(t, true, false)
	a := f.call(t, "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"refs/heads/main","type":"Github","paths":[{"directory":"./app/"},{"directory":"net","workspace":"prod"}]}`, "")
	var d statusData
	if a.status != 200 || json.Unmarshal(a.Data, &d) != nil {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	if len(f.checks) != 1 {
		t.Fatalf("checks %+v", f.checks)
	}
	c := f.checks[0]
	if c.Branch != "main" || c.Repo.CloneURL != "https://github.com/acme/infra.git" || c.PlanOnly || len(c.Paths) != 2 ||
		c.Paths[0] != (atoll.DriftPath{Dir: "app"}) || c.Paths[1] != (atoll.DriftPath{Dir: "net", Workspace: "prod"}) || c.User != "api-secret" {
		t.Errorf("check %+v", c)
	}
	if d.ID != "77" || len(d.Projects) != 2 || d.Projects[0].DetectionID != "77" || !d.Projects[0].HasDrift ||
		d.Projects[0].Drift.Summary != "Plan: 1 to add, 0 to change, 0 to destroy." || d.Projects[0].PlanOutput != "" || d.Projects[1].HasDrift {
		t.Errorf("detect %s", a.Data)
	}

	// Plan output on request; a failed project makes it 207.
	f.outcome.Projects = append(f.outcome.Projects, atoll.DriftProjectOutcome{Job: &atoll.Job{Project: "db", Dir: "db", Workspace: "default"},
		Result: atoll.DriftResult{State: atoll.DriftFailed, Error: "terraform plan failed"}, Output: "Error: boom"})
	a = f.call(t, "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"main","type":"Github","projects":["app"],"include_plan_output":true}`, "")
	d = statusData{}
	if a.status != 207 || !a.Success || json.Unmarshal(a.Data, &d) != nil || len(d.Projects) != 3 {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	if !strings.Contains(d.Projects[0].PlanOutput, "Plan: 1 to add") || d.Projects[2].PlanOutput != "" || d.Projects[2].Error != "terraform plan failed" {
		t.Errorf("projects %s", a.Data)
	}
	if c := f.checks[1]; len(c.Projects) != 1 || c.Projects[0] != "app" {
		t.Errorf("check %+v", c)
	}
}

func TestDriftAPIRemediate(t *testing.T) {
	f := newDriftFixture(t, true, true)
	planned := f.outcome.Projects
	// Apply with remediation on: the drifted projects' pending plans (app,
	// here) are applied: one apply job per project is its result.
	f.outcome.Projects = []atoll.DriftProjectOutcome{{Job: &atoll.Job{Kind: atoll.JobApply, State: atoll.JobSucceeded, Project: "app", Dir: "app", Workspace: "default"},
		Output: "Apply complete! Resources: 0 added, 1 changed, 0 destroyed."}}
	a := f.call(t, "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","action":"apply"}`, "")
	if a.status != 200 || !strings.Contains(string(a.Data), `"action":"apply"`) || !strings.Contains(string(a.Data), `"summary":"Apply completed successfully"`) ||
		!strings.Contains(string(a.Data), `"apply_output":"Apply complete!`) {
		t.Fatalf("apply: %d %s", a.status, a.raw)
	}
	if c := f.checks[len(f.checks)-1]; !c.Apply || c.PlanOnly || len(c.Paths) != 1 || c.Paths[0].Dir != "app" {
		t.Errorf("apply check %+v", c)
	}
	// Refused (no approval): the project failed, 409 with its message.
	f.outcome.Projects = []atoll.DriftProjectOutcome{{Job: &atoll.Job{Kind: atoll.JobApply, State: atoll.JobFailed, Project: "app", Dir: "app", Workspace: "default",
		Error: "The plan of project app must be approved in Atoll before it is applied: it has not been approved yet."}}}
	a = f.call(t, "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","action":"apply","projects":["app"]}`, "")
	if a.status != 409 || !strings.Contains(string(a.Error.Details), "must be approved") {
		t.Fatalf("apply refused: %d %s", a.status, a.raw)
	}
	f.outcome.Projects = planned
	// Plan: 200, plan only, kept.
	a = f.call(t, "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"refs/heads/main","type":"Github","paths":[{"directory":"app"}],"workspaces":["default"]}`, "")
	var res struct {
		ID       string `json:"id"`
		Ref      string `json:"ref"`
		Action   string `json:"action"`
		Status   string `json:"status"`
		Projects []struct {
			Status      string          `json:"status"`
			PlanOutput  string          `json:"plan_output"`
			DriftAfter  json.RawMessage `json:"drift_after"`
			DriftBefore json.RawMessage `json:"drift_before"`
		} `json:"projects"`
		Summary map[string]int `json:"summary"`
	}
	if a.status != 200 || json.Unmarshal(a.Data, &res) != nil {
		t.Fatalf("plan: %d %s", a.status, a.raw)
	}
	if res.Ref != "main" || res.Action != "plan" || res.Status != "success" || len(res.Projects) != 2 || res.Summary["success_count"] != 2 ||
		res.Projects[0].PlanOutput == "" || !strings.Contains(string(res.Projects[0].DriftAfter), `"to_add":1`) ||
		!strings.Contains(string(res.Projects[0].DriftBefore), `"to_add":2`) || res.Projects[1].DriftBefore != nil {
		t.Errorf("plan: %s", a.Data)
	}
	if c := f.checks[len(f.checks)-1]; !c.PlanOnly || len(c.Paths) != 1 || c.Paths[0] != (atoll.DriftPath{Dir: "app", Workspace: "default"}) {
		t.Errorf("check %+v", c)
	}
	first := res.ID

	// Every project failed: 409 with the result in the details, kept too.
	f.outcome.Projects = []atoll.DriftProjectOutcome{{Job: &atoll.Job{Project: "db", Dir: "db", Workspace: "default"},
		Result: atoll.DriftResult{State: atoll.DriftFailed, Error: "terraform plan failed"}}}
	a = f.call(t, "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github"}`, "")
	if a.status != 409 || a.Error.Code != "CONFLICT" || a.Error.Message != "drift remediation failed" || !strings.Contains(string(a.Error.Details), `"status":"failed"`) {
		t.Fatalf("failed: %d %s", a.status, a.raw)
	}
	// drift_only with nothing drifted among the named: success, nothing run.
	n := len(f.checks)
	a = f.call(t, "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","drift_only":true,"projects":["net"]}`, "")
	if a.status != 200 || len(f.checks) != n {
		t.Fatalf("drift only: %d %s (%d checks)", a.status, a.raw, len(f.checks)-n)
	}
	// drift_only: the drifted project, by path.
	a = f.call(t, "POST", "/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","drift_only":true}`, "")
	if c := f.checks[len(f.checks)-1]; len(f.checks) != n+1 || len(c.Paths) != 1 || c.Paths[0].Dir != "app" {
		t.Fatalf("drift only: %d %s %+v", a.status, a.raw, f.checks[n:])
	}

	// History: newest first, limited; by id, within its repository only.
	var list struct {
		Count   int `json:"count"`
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	a = f.call(t, "GET", listPath, "", "")
	// The two apply runs first, then these four.
	if a.status != 200 || json.Unmarshal(a.Data, &list) != nil || list.Count != 6 || list.Results[3].ID != first {
		t.Fatalf("list: %d %s", a.status, a.raw)
	}
	a = f.call(t, "GET", listPath+"&limit=2", "", "")
	if json.Unmarshal(a.Data, &list) != nil || list.Count != 2 {
		t.Fatalf("list limit: %d %s", a.status, a.raw)
	}
	a = f.call(t, "GET", listPath+"&limit=500", "", "")
	if json.Unmarshal(a.Data, &list) != nil || list.Count != 6 {
		t.Fatalf("list limit 500: %d %s", a.status, a.raw)
	}
	a = f.call(t, "GET", "/api/drift/remediate?repository=other/repo&type=Github", "", "")
	if a.status != 403 {
		t.Fatalf("other repo list: %d %s", a.status, a.raw)
	}
	a = f.call(t, "GET", "/api/drift/remediate/"+first+"?repository=acme/infra&type=Github", "", "")
	if a.status != 200 || json.Unmarshal(a.Data, &res) != nil || res.ID != first || res.Status != "success" {
		t.Fatalf("get: %d %s", a.status, a.raw)
	}
	// Another (allowlisted, known) repository's id is not found.
	f.s.Allowlist = runner.ParseAllowlist("*")
	a = f.call(t, "GET", "/api/drift/remediate/"+first+"?repository=other/repo&type=Github", "", "")
	if a.status != 404 || a.Error.Code != "NOT_FOUND" {
		t.Fatalf("get from another repository: %d %s", a.status, a.raw)
	}
	a = f.call(t, "GET", "/api/drift/remediate?repository=other/repo&type=Github", "", "")
	if json.Unmarshal(a.Data, &list) != nil || list.Count != 0 || !strings.Contains(a.raw, `"results":[]`) {
		t.Fatalf("other repo list: %d %s", a.status, a.raw)
	}
}

// A viewer reads the drift API but may not run checks.
func TestDriftAPIRoles(t *testing.T) {
	f := newDriftFixture(t, true, false)
	viewer := &atoll.User{Name: "vera", Role: atoll.RoleViewer}
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", statusPath, "", 200},
		{"GET", listPath, "", 200},
		{"POST", "/api/drift/detect", detectBody, 403},
		{"POST", "/api/drift/remediate", detectBody, 403},
	} {
		r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/json")
		r = r.WithContext(atoll.NewContextWithUser(r.Context(), viewer))
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if w.Code != c.want || c.want == 403 && !strings.Contains(w.Body.String(), `"code":"FORBIDDEN"`) {
			t.Errorf("%s %s: %d %s", c.method, c.path, w.Code, w.Body)
		}
	}
}

// A check that did not run: a project the branch does not have is the
// client's to fix (400, field projects); anything else is a 500 that says
// nothing more.
func TestDriftAPIDetectDidNotRun(t *testing.T) {
	f := newDriftFixture(t, true, false)
	f.outcome = &atoll.DriftOutcome{Request: &atoll.Request{ID: 9, Error: `No project "nope" at the head of main.`}, Branch: "main"}
	a := f.call(t, "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"main","type":"Github","projects":["nope"]}`, "")
	if a.status != 400 || a.Error.Code != "VALIDATION_ERROR" || !strings.Contains(string(a.Error.Details), `"field":"projects"`) || !strings.Contains(string(a.Error.Details), "nope") {
		t.Fatalf("unknown project: %d %s", a.status, a.raw)
	}
	f.outcome.Request.Error = "Checking out acme/infra at abc failed: https://x:secret@github.com"
	a = f.call(t, "POST", "/api/drift/detect", `{"repository":"acme/infra","ref":"main","type":"Github"}`, "")
	if a.status != 500 || a.Error.Message != "internal server error" || strings.Contains(a.raw, "secret") {
		t.Fatalf("check failed: %d %s", a.status, a.raw)
	}
}

package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/web"
)

// approvalFixture is a server whose --plan-approval requires acme/infra's
// production project, with one pending plan of it on pull request #1
// (opened by alice).
type approvalFixture struct {
	s      *web.Server
	db     *store.DB
	planID int64
	pullID int64
	projID int64
}

func newApprovalFixture(t *testing.T) *approvalFixture {
	t.Helper()
	db := storetest.Open(t)
	policy, err := runner.ParseApprovalPolicy("acme/infra/production")
	if err != nil {
		t.Fatal(err)
	}
	f := &approvalFixture{db: db}
	f.s = &web.Server{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	withRunner(f.s, &runner.Runner{DB: db, Config: runner.Config{PlanApproval: policy}})
	f.planID, f.pullID, f.projID = f.plan(t, 0, 0)
	return f
}

// plan stores a new plan of the production project (creating the pull
// request and project the first time) and returns its ids.
func (f *approvalFixture) plan(t *testing.T, pullID, projID int64) (planID, pull, proj int64) {
	t.Helper()
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		if pullID == 0 {
			repoID, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra"})
			if err != nil {
				return err
			}
			if pullID, err = tx.UpsertPull(repoID, atoll.Pull{Number: 1, HeadSHA: "abc", Author: "alice"}); err != nil {
				return err
			}
			if projID, err = tx.UpsertProject(repoID, atoll.Project{Name: "production", Dir: "production", Workspace: "default"}); err != nil {
				return err
			}
			if _, err := tx.TakeLock(projID, pullID, "alice"); err != nil {
				return err
			}
		}
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: pullID, ProjectID: projID, HeadSHA: "abc"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		p := &atoll.Plan{JobID: j.ID, PullID: pullID, ProjectID: projID, HeadSHA: "abc", File: []byte("plan " + strconv.FormatInt(j.ID, 10)), ShowJSON: []byte("{}")}
		if err := tx.InsertPlan(p); err != nil {
			return err
		}
		planID = p.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return planID, pullID, projID
}

// state is everything the approval routes can change.
type approvalState struct {
	decisions, events int
	freeze            atoll.Freeze
}

func (f *approvalFixture) state(t *testing.T) approvalState {
	t.Helper()
	ctx := context.Background()
	ds, err := f.db.PlanApprovals(ctx, f.planID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := f.db.Events(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := f.db.Freeze(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return approvalState{len(ds), len(evs), fr}
}

var (
	nobody    *atoll.User
	viewerU   = &atoll.User{Name: "vera", Role: atoll.RoleViewer}
	operatorU = &atoll.User{Name: "olivia", Role: atoll.RoleOperator}
	adminU    = &atoll.User{Name: "adam", Role: atoll.RoleAdmin}
)

// serve sends a request as u (nil: nobody signed in) through the whole
// handler. Form bodies are page posts, JSON bodies API calls.
func (f *approvalFixture) serve(u *atoll.User, method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	switch {
	case strings.HasPrefix(body, "{"):
		req.Header.Set("Content-Type", "application/json")
	case body != "":
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if u != nil {
		req = req.WithContext(atoll.NewContextWithUser(req.Context(), u))
	}
	rec := httptest.NewRecorder()
	f.s.Handler().ServeHTTP(rec, req)
	return rec
}

func TestApprovalRoutesRoles(t *testing.T) {
	plan := func(f *approvalFixture) string { return "/plans/" + strconv.FormatInt(f.planID, 10) }
	api := func(f *approvalFixture) string {
		return "/api/v1/plans/" + strconv.FormatInt(f.planID, 10) + "/approvals"
	}
	type call struct {
		name         string
		method, path string
		body         string
		need         atoll.Role
		ok           int  // status when allowed
		mutates      bool // a refused call must change nothing
		pathFor      func(*approvalFixture) string
	}
	calls := []call{
		{name: "approve form", method: "POST", body: "reason=checked", need: atoll.RoleOperator, ok: http.StatusSeeOther, mutates: true,
			pathFor: func(f *approvalFixture) string { return plan(f) + "/approve" }},
		{name: "reject form", method: "POST", body: "reason=wrong+region", need: atoll.RoleOperator, ok: http.StatusSeeOther, mutates: true,
			pathFor: func(f *approvalFixture) string { return plan(f) + "/reject" }},
		{name: "approve api", method: "POST", body: `{"decision":"approve","reason":"ok"}`, need: atoll.RoleOperator, ok: http.StatusCreated, mutates: true, pathFor: api},
		{name: "approvals api", method: "GET", need: atoll.RoleViewer, ok: http.StatusOK, pathFor: api},
		{name: "freeze form", method: "POST", path: "/admin/freeze", body: "on=1&reason=release+week", need: atoll.RoleAdmin, ok: http.StatusSeeOther, mutates: true},
		{name: "freeze api put", method: "PUT", path: "/api/v1/freeze", body: `{"on":true,"reason":"release week"}`, need: atoll.RoleAdmin, ok: http.StatusOK, mutates: true},
		{name: "freeze api get", method: "GET", path: "/api/v1/freeze", need: atoll.RoleViewer, ok: http.StatusOK},
		{name: "audit page", method: "GET", path: "/audit", need: atoll.RoleViewer, ok: http.StatusOK},
		{name: "audit api", method: "GET", path: "/api/v1/audit", need: atoll.RoleViewer, ok: http.StatusOK},
	}
	for _, c := range calls {
		for _, u := range []*atoll.User{nobody, viewerU, operatorU, adminU} {
			name := "nobody"
			if u != nil {
				name = string(u.Role)
			}
			t.Run(c.name+"/"+name, func(t *testing.T) {
				f := newApprovalFixture(t)
				path := c.path
				if c.pathFor != nil {
					path = c.pathFor(f)
				}
				before := f.state(t)
				rec := f.serve(u, c.method, path, c.body)
				want := c.ok
				switch {
				case u == nil:
					want = http.StatusUnauthorized
				case !u.Role.Allows(c.need):
					want = http.StatusForbidden
				}
				if rec.Code != want {
					t.Fatalf("%s %s as %s = %d, want %d: %s", c.method, path, name, rec.Code, want, rec.Body)
				}
				after := f.state(t)
				switch {
				case want != c.ok && after != before:
					t.Fatalf("a refused call changed %+v to %+v", before, after)
				case want == c.ok && c.mutates && after.events != before.events+1:
					t.Fatalf("an allowed call recorded %d audit events, want 1", after.events-before.events)
				case want == c.ok && !c.mutates && after != before:
					t.Fatalf("a read changed %+v to %+v", before, after)
				}
			})
		}
	}
}

func TestApprovalFormAndAPI(t *testing.T) {
	ctx := context.Background()
	f := newApprovalFixture(t)
	id := strconv.FormatInt(f.planID, 10)

	// The pull request's author cannot approve its plan; nothing is written.
	author := &atoll.User{Name: "alice", Role: atoll.RoleOperator}
	before := f.state(t)
	rec := f.serve(author, "POST", "/api/v1/plans/"+id+"/approvals", `{"decision":"approve"}`)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "someone else must approve") {
		t.Fatalf("self-approval = %d %s", rec.Code, rec.Body)
	}
	if after := f.state(t); after != before {
		t.Fatal("a refused self-approval changed something")
	}

	// A plain form post redirects back with a flash message; the decision
	// is recorded under the signed-in user and the client's address.
	rec = f.serve(operatorU, "POST", "/plans/"+id+"/approve", "reason=checked+the+diff&back=%2Frepos%2Facme%2Finfra%2Fpulls%2F1")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/repos/acme/infra/pulls/1" {
		t.Fatalf("approve form = %d, Location %q", rec.Code, rec.Header().Get("Location"))
	}
	d, err := f.db.PlanDecision(ctx, f.planID)
	if err != nil || d == nil || d.User != "olivia" || d.Reason != "checked the diff" || d.Source != "192.0.2.1" {
		t.Fatalf("decision = %+v, %v", d, err)
	}
	// Back never leaves the site.
	rec = f.serve(operatorU, "POST", "/plans/"+id+"/approve", "back=https%3A%2F%2Fevil.example%2F")
	if loc := rec.Header().Get("Location"); loc != "/" {
		t.Fatalf("off-site back redirected to %q", loc)
	}

	// htmx: the answer is the panel, swapped in place of the old one, with
	// the outcome in its message box.
	rec = f.serve(operatorU, "POST", "/plans/"+id+"/reject", "reason=wrong+region", "HX-Request", "true")
	if rec.Code != http.StatusOK || rec.Header().Get("HX-Retarget") != "#approval-"+id ||
		!strings.Contains(rec.Body.String(), `id="approval-`+id+`"`) || !strings.Contains(rec.Body.String(), "Rejected by") ||
		!strings.Contains(rec.Body.String(), "wrong region") ||
		!strings.Contains(rec.Body.String(), `<div id="approval-`+id+`-msg"><div class="flash ok" role="status">Plan rejected: it will not be applied while this stands.</div></div>`) {
		t.Fatalf("htmx reject = %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	// A refused htmx post shows its reason in the panel's message box.
	rec = f.serve(operatorU, "POST", "/plans/"+id+"/reject", "reason=", "HX-Request", "true")
	if rec.Code != http.StatusBadRequest || rec.Header().Get("HX-Retarget") != "" || !strings.Contains(rec.Body.String(), "Say why") {
		t.Fatalf("htmx reject without reason = %d %v %s", rec.Code, rec.Header(), rec.Body)
	}

	// The API shows the state: required, rejected, with its history.
	var got struct {
		Required bool             `json:"required"`
		Approved bool             `json:"approved"`
		State    string           `json:"state"`
		History  []atoll.Approval `json:"history"`
	}
	rec = f.serve(viewerU, "GET", "/api/v1/plans/"+id+"/approvals", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || !got.Required || got.Approved || got.State != "rejected" || len(got.History) != 3 {
		t.Fatalf("approvals = %+v, %v: %s", got, err, rec.Body)
	}
	rec = f.serve(adminU, "POST", "/api/v1/plans/"+id+"/approvals", `{"decision":"approve","reason":"fixed"}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("approve api = %d %s", rec.Code, rec.Body)
	}
	rec = f.serve(viewerU, "GET", "/api/v1/plans/"+id+"/approvals", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || !got.Approved || got.State != "approved" {
		t.Fatalf("approvals after approve = %+v, %v", got, err)
	}

	// A newer plan supersedes this one: deciding on the old one is a
	// conflict and writes nothing; the new one starts unapproved.
	newer, _, _ := f.plan(t, f.pullID, f.projID)
	before = f.state(t)
	rec = f.serve(operatorU, "POST", "/api/v1/plans/"+id+"/approvals", `{"decision":"approve"}`)
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "not the latest plan") {
		t.Fatalf("approve superseded plan = %d %s", rec.Code, rec.Body)
	}
	if after := f.state(t); after != before {
		t.Fatal("a refused approval changed something")
	}
	rec = f.serve(viewerU, "GET", "/api/v1/plans/"+strconv.FormatInt(newer, 10)+"/approvals", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Approved || got.State != "pending" || len(got.History) != 0 {
		t.Fatalf("new plan's approvals = %+v, %v", got, err)
	}
	// Unknown plans and bad bodies.
	if rec := f.serve(operatorU, "POST", "/api/v1/plans/999/approvals", `{"decision":"approve"}`); rec.Code != http.StatusNotFound {
		t.Fatalf("approve missing plan = %d", rec.Code)
	}
	if rec := f.serve(operatorU, "POST", "/api/v1/plans/"+id+"/approvals", `{"decision":"approve","user":"mallory"}`); rec.Code != http.StatusBadRequest {
		t.Fatalf("a body naming a user = %d", rec.Code)
	}
}

func TestFreezeRoutesAndAudit(t *testing.T) {
	f := newApprovalFixture(t)
	// Freezing needs a reason.
	if rec := f.serve(adminU, "PUT", "/api/v1/freeze", `{"on":true}`); rec.Code != http.StatusBadRequest {
		t.Fatalf("freeze without reason = %d %s", rec.Code, rec.Body)
	}
	rec := f.serve(adminU, "POST", "/admin/freeze", "on=1&reason=release+week")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("freeze form = %d %s", rec.Code, rec.Body)
	}
	var fr atoll.Freeze
	rec = f.serve(viewerU, "GET", "/api/v1/freeze", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &fr); err != nil || !fr.On || fr.By != "adam" || fr.Reason != "release week" {
		t.Fatalf("freeze = %+v, %v", fr, err)
	}
	// Every page shows the freeze (pageMeta), the audit page included.
	rec = f.serve(viewerU, "GET", "/audit", "", "Accept", "text/html")
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, "banner-freeze") || !strings.Contains(body, "freeze.on") {
		t.Fatalf("audit page while frozen = %d %s", rec.Code, body)
	}
	// Only admins see the freeze form there.
	if strings.Contains(rec.Body.String(), `action="/admin/freeze"`) {
		t.Fatal("a viewer sees the freeze form")
	}
	if rec := f.serve(adminU, "GET", "/audit", ""); !strings.Contains(rec.Body.String(), `action="/admin/freeze"`) {
		t.Fatal("an admin does not see the freeze form")
	}
	// The banner alone, which open pages re-fetch when the freeze changes.
	rec = f.serve(viewerU, "GET", "/banner/freeze", "", "Accept", "text/html")
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `id="freeze-banner"`) ||
		!strings.Contains(body, "Applies are frozen by adam: release week.") || strings.Contains(body, "<html") {
		t.Fatalf("freeze banner while frozen = %d %s", rec.Code, body)
	}
	rec = f.serve(adminU, "PUT", "/api/v1/freeze", `{"on":false}`)
	if err := json.Unmarshal(rec.Body.Bytes(), &fr); err != nil || fr.On {
		t.Fatalf("unfreeze = %+v, %v", fr, err)
	}
	rec = f.serve(viewerU, "GET", "/banner/freeze", "", "Accept", "text/html")
	if body := rec.Body.String(); !strings.Contains(body, `id="freeze-banner"`) || strings.Contains(body, "banner-freeze") {
		t.Fatalf("freeze banner after unfreezing = %s", body)
	}

	// Audit filters and keyset pages, on the API and the page.
	for range 3 {
		f.serve(operatorU, "POST", "/api/v1/plans/"+strconv.FormatInt(f.planID, 10)+"/approvals", `{"decision":"approve"}`)
	}
	var page struct {
		Events     []atoll.Event `json:"events"`
		NextBefore int64         `json:"next_before"`
	}
	rec = f.serve(viewerU, "GET", "/api/v1/audit?actor=olivia&limit=2", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || len(page.Events) != 2 || page.NextBefore != page.Events[1].ID {
		t.Fatalf("audit page 1 = %+v, %v", page, err)
	}
	for _, e := range page.Events {
		if e.Actor != "olivia" || e.Action != "plan.approve" || e.Source != "192.0.2.1" {
			t.Fatalf("audit event = %+v", e)
		}
	}
	rec = f.serve(viewerU, "GET", "/api/v1/audit?actor=olivia&limit=2&before="+strconv.FormatInt(page.NextBefore, 10), "")
	page.NextBefore = 0
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || len(page.Events) != 1 || page.NextBefore != 0 {
		t.Fatalf("audit page 2 = %+v, %v", page, err)
	}
	rec = f.serve(viewerU, "GET", "/api/v1/audit?action=freeze&repo=", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || len(page.Events) != 2 {
		t.Fatalf("freeze events = %+v, %v", page, err)
	}
	if rec := f.serve(viewerU, "GET", "/api/v1/audit?since=yesterday", ""); rec.Code != http.StatusBadRequest {
		t.Fatalf("bad since = %d", rec.Code)
	}
	rec = f.serve(viewerU, "GET", "/audit?"+url.Values{"actor": {"olivia"}, "limit": {"2"}}.Encode(), "")
	if body := rec.Body.String(); !strings.Contains(body, `rel="next"`) || !strings.Contains(body, "before=") {
		t.Fatalf("audit page has no older link: %s", body)
	}
}

// While applies are frozen, the API's apply is refused with the freeze's
// reason and queues nothing.
func TestAPIApplyRefusedWhileFrozen(t *testing.T) {
	ctx := context.Background()
	f := newApprovalFixture(t)
	f.s.Demo = true // the API secret check (until tokens) lets it through
	if rec := f.serve(adminU, "PUT", "/api/v1/freeze", `{"on":true,"reason":"release week"}`); rec.Code != http.StatusOK {
		t.Fatalf("freeze = %d %s", rec.Code, rec.Body)
	}
	before, err := f.db.CountRequests(ctx, atoll.RequestQueued)
	if err != nil {
		t.Fatal(err)
	}
	rec := f.serve(operatorU, "POST", "/api/v1/apply", `{"Repository":"acme/infra","PR":1}`)
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "Applies are frozen by adam since") || !strings.Contains(rec.Body.String(), "release week") {
		t.Fatalf("apply while frozen = %d %s", rec.Code, rec.Body)
	}
	if after, _ := f.db.CountRequests(ctx, atoll.RequestQueued); after != before {
		t.Fatalf("an apply was queued while frozen: %d -> %d", before, after)
	}
}

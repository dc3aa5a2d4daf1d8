package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/web"
)

// roles are who the route × role matrix calls each route as: nobody signed
// in, then each role.
var roles = []atoll.Role{"", atoll.RoleViewer, atoll.RoleOperator, atoll.RoleAdmin}

// access is the status a route answers each of roles with.
type access [4]int

func same(status int) access { return access{status, status, status, status} }

var reads = access{401, 200, 200, 200}

// operatorOnly and adminOnly are refused below the role; ok is the status
// of the harmless call made as the roles that may.
func operatorOnly(ok int) access { return access{401, 403, ok, ok} }
func adminOnly(ok int) access    { return access{401, 403, 403, ok} }

// matrixRoute is one call of the matrix. path and body are a call that
// would change something: the roles refused make it, and nothing must
// change. The roles allowed make okPath / okBody instead (when set), a
// harmless call refused by the handler itself (no such lock, an invalid
// body), whose status shows that the role got past the gate.
type matrixRoute struct {
	pattern      string // as Handler registers it
	path, body   string
	okPath, okBy string
	want         access
	stream       bool // an endless answer: only its status is read
}

func (rt matrixRoute) method() string { m, _, _ := strings.Cut(rt.pattern, " "); return m }

// routeMatrix is every route Handler registers, each called with nobody
// signed in and as each role. TestRouteMatrixCoversEveryRoute fails when a
// route is registered without an entry here.
func routeMatrix(f *authFixture, t *testing.T) []matrixRoute {
	ctx := context.Background()
	plans, err := f.db.LatestPlans(ctx, f.pullID)
	if err != nil || len(plans) != 1 {
		t.Fatalf("plans = %v, %v", plans, err)
	}
	viewer, err := f.db.UserByName(ctx, "viewer-user")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := f.db.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var viewerToken int64
	for _, tok := range toks {
		if tok.UserID == viewer.ID {
			viewerToken = tok.ID
		}
	}
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	job, lock, plan, user, token := i(f.doneJob), i(f.lockID), i(plans[0].ID), i(viewer.ID), i(viewerToken)
	const pull = "/repos/acme/infra/pulls/7"
	return []matrixRoute{
		// Open: webhooks (signed by the VCS host), health, signing in and
		// out, static files.
		{pattern: "POST /events", path: "/events", body: `{}`, want: same(400)},
		{pattern: "GET /healthz", path: "/healthz", want: same(200)},
		{pattern: "GET /readyz", path: "/readyz", want: same(200)},
		{pattern: "GET /login", path: "/login", want: access{200, 303, 303, 303}}, // signed in, it goes back
		{pattern: "POST /login", path: "/login", body: "name=admin-user&password=wrong", want: same(401)},
		{pattern: "POST /logout", path: "/logout", want: same(200)},                        // no session to end
		{pattern: "GET /auth/oidc/login", path: "/auth/oidc/login", want: same(404)},       // no OIDC configured
		{pattern: "GET /auth/oidc/callback", path: "/auth/oidc/callback", want: same(404)}, // idem
		{pattern: "GET /favicon.ico", path: "/favicon.ico", want: same(204)},
		{pattern: "GET /assets/", path: "/assets/atoll.css", want: same(200)},
		{pattern: "GET /", path: "/no/such/page", want: access{401, 404, 404, 404}},
		// The worker protocol: its own bearer tokens, checked by the
		// worker service, never a session or an API token. This server
		// has no worker pools: 404 to everyone, nobody included.
		{pattern: "POST /api/v1/workers/claim", path: "/api/v1/workers/claim", body: `{"worker":"w","pool":"p","protocol":1}`, want: same(404)},
		{pattern: "POST /api/v1/workers/jobs/{id}/heartbeat", path: "/api/v1/workers/jobs/" + job + "/heartbeat", want: same(404)},
		{pattern: "POST /api/v1/workers/jobs/{id}/logs", path: "/api/v1/workers/jobs/" + job + "/logs", body: `{"lines":[]}`, want: same(404)},
		{pattern: "POST /api/v1/workers/jobs/{id}/applying", path: "/api/v1/workers/jobs/" + job + "/applying", want: same(404)},
		{pattern: "GET /api/v1/workers/jobs/{id}/plan", path: "/api/v1/workers/jobs/" + job + "/plan", want: same(404)},
		{pattern: "POST /api/v1/workers/jobs/{id}/result", path: "/api/v1/workers/jobs/" + job + "/result", body: `{"result":{}}`, want: same(404)},
		{pattern: "GET /api/v1/workers/jobs/{id}/git/info/refs", path: "/api/v1/workers/jobs/" + job + "/git/info/refs?service=git-upload-pack", want: same(404)},
		{pattern: "POST /api/v1/workers/jobs/{id}/git/git-upload-pack", path: "/api/v1/workers/jobs/" + job + "/git/git-upload-pack", body: "0000", want: same(404)},

		// Pages and reads: any signed-in user.
		{pattern: "GET /{$}", path: "/", want: reads},
		{pattern: "GET /{$}", path: "/?section=jobs", want: reads},
		{pattern: "GET /jobs/{id}", path: "/jobs/" + job, want: reads},
		{pattern: "GET /jobs/{id}/ws", path: "/jobs/" + job + "/ws", want: access{401, 400, 400, 400}}, // no upgrade asked (web/jobws_test.go upgrades)
		{pattern: "GET /jobs/{id}/log.txt", path: "/jobs/" + job + "/log.txt", want: reads},
		{pattern: "GET /api/v1/changes", path: "/api/v1/changes", want: reads, stream: true},
		{pattern: "GET /repos/{owner}/{name}/pulls/{number}", path: pull, want: reads},
		{pattern: "GET /repos/{owner}/{name}/pulls/{number}", path: pull + "?section=projects", want: reads},
		{pattern: "GET /repos/{owner}/{name}/pulls/{number}", path: pull + "?section=notice&request=1&for=all", want: reads},
		{pattern: "GET /plans/{id}", path: "/plans/" + plan, want: reads},
		{pattern: "GET /api/v1/plans/{id}", path: "/api/v1/plans/" + plan, want: reads},
		{pattern: "GET /api/v1/plans/{id}/approvals", path: "/api/v1/plans/" + plan + "/approvals", want: reads},
		{pattern: "GET /api/v1/freeze", path: "/api/v1/freeze", want: reads},
		{pattern: "GET /audit", path: "/audit", want: reads},
		{pattern: "GET /banner/freeze", path: "/banner/freeze", want: reads},
		{pattern: "GET /api/v1/audit", path: "/api/v1/audit", want: reads},
		{pattern: "GET /locks", path: "/locks", want: reads},
		{pattern: "GET /runs", path: "/runs", want: reads},
		{pattern: "GET /api/v1/search", path: "/api/v1/search?q=first", want: reads},
		{pattern: "GET /api/v1/status", path: "/api/v1/status", want: reads},
		{pattern: "GET /api/v1/locks", path: "/api/v1/locks", want: reads},
		{pattern: "GET /api/v1/pulls", path: "/api/v1/pulls", want: reads},
		{pattern: "GET /api/v1/repos/{owner}/{name}/pulls/{number}", path: "/api/v1" + pull, want: reads},
		{pattern: "GET /api/v1/jobs", path: "/api/v1/jobs", want: reads},
		{pattern: "GET /api/v1/jobs/{id}", path: "/api/v1/jobs/" + job, want: reads},
		{pattern: "GET /api/v1/jobs/{id}/log", path: "/api/v1/jobs/" + job + "/log", want: reads},
		{pattern: "GET /api/v1/me", path: "/api/v1/me", want: reads},
		{pattern: "GET /metrics", path: "/metrics", want: reads},
		{pattern: "GET /admin", path: "/admin", want: adminOnly(200)},
		{pattern: "GET /workers", path: "/workers", want: reads}, // no worker pools: the page says so
		{pattern: "GET /drift", path: "/drift", want: reads},
		{pattern: "GET /drift", path: "/drift?section=drift&state=drifted", want: reads},
		{pattern: "GET /drift", path: "/drift?repo=acme/infra&project=1&branch=main", want: reads},

		// Actions of an operator: plan, apply, comment, approve, reject,
		// unlock.
		{pattern: "DELETE /api/v1/locks/{id}", path: "/api/v1/locks/" + lock, body: `{}`, okPath: "/api/v1/locks/999999", want: operatorOnly(404)},
		{pattern: "POST /api/v1/repos/{owner}/{name}/pulls/{number}/comments", path: "/api/v1" + pull + "/comments", body: `{"body":"atlantis unlock"}`, okBy: `{"body":" "}`, want: operatorOnly(400)},
		{pattern: "POST /api/v1/plan", path: "/api/v1/plan", body: `{"Repository":"acme/infra","PR":7}`, okBy: `{"Repository":"acme/infra"}`, want: operatorOnly(400)},
		{pattern: "POST /api/v1/apply", path: "/api/v1/apply", body: `{"Repository":"acme/infra","PR":7}`, okBy: `{"Repository":"acme/infra"}`, want: operatorOnly(400)},
		{pattern: "POST /api/plan", path: "/api/plan", body: `{"Repository":"acme/infra","PR":7}`, okBy: `{"Repository":"acme/infra"}`, want: operatorOnly(400)},
		// Atlantis's drift API, off in this fixture (503 past the gate);
		// refusals in its envelope.
		{pattern: "GET /api/drift/status", path: "/api/drift/status?repository=acme/infra&type=Github", want: access{401, 503, 503, 503}},
		{pattern: "POST /api/drift/detect", path: "/api/drift/detect", body: `{"repository":"acme/infra","ref":"main","type":"Github"}`, want: access{401, 403, 503, 503}},
		{pattern: "GET /api/drift/remediate", path: "/api/drift/remediate?repository=acme/infra&type=Github", want: access{401, 503, 503, 503}},
		{pattern: "GET /api/drift/remediate/{id}", path: "/api/drift/remediate/x?repository=acme/infra&type=Github", want: access{401, 503, 503, 503}},
		{pattern: "POST /api/drift/remediate", path: "/api/drift/remediate", body: `{"repository":"acme/infra","ref":"main","type":"Github"}`, want: access{401, 403, 503, 503}},
		{pattern: "POST /api/apply", path: "/api/apply", body: `{"Repository":"acme/infra","PR":7}`, okBy: `{"Repository":"acme/infra"}`, want: operatorOnly(400)},
		{pattern: "POST /repos/{owner}/{name}/pulls/{number}/commands", path: pull + "/commands", body: "command=plan", okBy: "command=destroy", want: operatorOnly(400)},
		{pattern: "POST /repos/{owner}/{name}/pulls/{number}/comment", path: pull + "/comment", body: "body=atlantis+unlock", okBy: "body=+", want: operatorOnly(400)},
		{pattern: "POST /plans/{id}/approve", path: "/plans/" + plan + "/approve", body: "reason=fine", okPath: "/plans/999999/approve", want: operatorOnly(404)},
		{pattern: "POST /plans/{id}/reject", path: "/plans/" + plan + "/reject", body: "reason=no", okPath: "/plans/999999/reject", want: operatorOnly(404)},
		{pattern: "POST /api/v1/plans/{id}/approvals", path: "/api/v1/plans/" + plan + "/approvals", body: `{"decision":"approve"}`, okPath: "/api/v1/plans/999999/approvals", want: operatorOnly(404)},
		// No drift checks on this server: 404 past the gate.
		{pattern: "POST /drift/check", path: "/drift/check", body: "repo=acme/infra&branch=main", want: operatorOnly(404)},
		{pattern: "POST /drift/reconcile", path: "/drift/reconcile", body: "repo=acme/infra&branch=main&project=app", want: operatorOnly(404)},
		{pattern: "POST /drift/apply", path: "/drift/apply", body: "repo=acme/infra&branch=main&project=app", want: operatorOnly(404)},
		{pattern: "POST /locks/unlock", path: "/locks/unlock", body: "id=" + lock + "&confirm=1", okBy: "id=999999&confirm=1", want: operatorOnly(404)},

		// Actions of an admin: the freeze, users and tokens.
		{pattern: "POST /admin/freeze", path: "/admin/freeze", body: "on=1&reason=x", okBy: "on=maybe", want: adminOnly(400)},
		{pattern: "PUT /api/v1/freeze", path: "/api/v1/freeze", body: `{"on":true,"reason":"x"}`, okBy: `{"bogus":1}`, want: adminOnly(400)},
		{pattern: "POST /admin/users", path: "/admin/users", body: "name=eve&role=admin&password=a+long+password", okBy: "name=&role=admin", want: adminOnly(400)},
		{pattern: "POST /admin/users/{id}/role", path: "/admin/users/" + user + "/role", body: "role=admin", okPath: "/admin/users/999999/role", want: adminOnly(404)},
		{pattern: "POST /admin/users/{id}/disable", path: "/admin/users/" + user + "/disable", body: "disabled=true", okPath: "/admin/users/999999/disable", want: adminOnly(404)},
		{pattern: "POST /admin/users/{id}/vcs-logins", path: "/admin/users/" + user + "/vcs-logins", body: "vcs_logins=eve", okPath: "/admin/users/999999/vcs-logins", want: adminOnly(404)},
		{pattern: "POST /admin/users/{id}/delete", path: "/admin/users/" + user + "/delete", okPath: "/admin/users/999999/delete", want: adminOnly(404)},
		{pattern: "POST /admin/tokens", path: "/admin/tokens", body: "user=viewer-user&name=x", okBy: "user=nobody&name=x", want: adminOnly(404)},
		{pattern: "POST /admin/tokens/{id}/revoke", path: "/admin/tokens/" + token + "/revoke", okPath: "/admin/tokens/999999/revoke", want: adminOnly(404)},
		// Worker tokens: this server has no worker pools (404 past the gate).
		{pattern: "POST /admin/worker-tokens", path: "/admin/worker-tokens", body: "name=eu&pool=eu", want: adminOnly(404)},
		{pattern: "POST /admin/worker-tokens/{id}/revoke", path: "/admin/worker-tokens/1/revoke", want: adminOnly(404)},
	}
}

// call makes one call of the matrix as role and returns its status.
func (f *authFixture) call(t *testing.T, rt matrixRoute, role atoll.Role, allowed bool) (int, string) {
	t.Helper()
	path, body := rt.path, rt.body
	if allowed && rt.okPath != "" {
		path = rt.okPath
	}
	if allowed && rt.okBy != "" {
		body = rt.okBy
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, rt.method(), f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// Statuses, not redirects with a message: every client says JSON.
	req.Header.Set("Accept", "application/json")
	if rt.method() != "GET" {
		if strings.HasPrefix(path, "/api/") || path == "/events" {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if role != "" {
		req.Header.Set("Authorization", "Bearer "+f.tokens[role])
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if rt.stream {
		return res.StatusCode, ""
	}
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// allows reports whether want lets role past the gate: the status is
// neither 401 nor 403.
func allows(status int) bool { return status != 401 && status != 403 }

// dbState is what a refused call must not change: locks, queued requests,
// approvals, the freeze, users, tokens, comments and audit events (but
// failed logins, which are recorded on purpose).
func (f *authFixture) dbState(t *testing.T, planID int64) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	locks, err := f.db.Locks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locks {
		fmt.Fprintf(&b, "lock %d %s; ", l.ID, l.User)
	}
	for id := int64(1); ; id++ {
		q, err := f.db.Request(ctx, id)
		if atoll.ErrorCode(err) == atoll.ENOTFOUND {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "request %d %q; ", q.ID, q.Comment)
	}
	approvals, err := f.db.PlanApprovals(ctx, planID)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "approvals %d; ", len(approvals))
	freeze, err := f.db.Freeze(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "freeze %v; ", freeze.On)
	users, err := f.db.Users(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		fmt.Fprintf(&b, "user %s %s %v %q; ", u.Name, u.Role, u.Disabled, u.VCSLogins)
	}
	toks, err := f.db.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		fmt.Fprintf(&b, "token %d %s; ", tok.ID, tok.User)
	}
	comments, err := f.db.Comments(ctx, f.pullID)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "comments %d; ", len(comments))
	events, err := f.db.Events(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Action != "login_failed" {
			fmt.Fprintf(&b, "event %s %s; ", e.Action, e.Actor)
		}
	}
	return b.String()
}

// Every route, called with nobody signed in and as each role: reads need
// any user, actions an operator, the freeze, users and tokens an admin;
// the open routes need nobody. Refused calls change nothing in the
// database; neither do the harmless calls of the roles allowed.
func TestRouteAccessByRole(t *testing.T) {
	f := newAuthFixture(t, func(s *web.Server) { s.Changes = inmem.NewChanges() })
	ctx := context.Background()
	plans, err := f.db.LatestPlans(ctx, f.pullID)
	if err != nil || len(plans) != 1 {
		t.Fatalf("plans = %v, %v", plans, err)
	}
	before := f.dbState(t, plans[0].ID)
	for _, rt := range routeMatrix(f, t) {
		for i, role := range roles {
			name := rt.method() + " " + rt.path + " as " + string(role)
			if role == "" {
				name += "nobody"
			}
			t.Run(name, func(t *testing.T) {
				want := rt.want[i]
				status, body := f.call(t, rt, role, allows(rt.want[i]))
				if status != want {
					t.Fatalf("status %d, want %d: %.300s", status, want, body)
				}
				if after := f.dbState(t, plans[0].ID); after != before {
					t.Fatalf("the call changed the database:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}

	// An operator may unlock, recorded as the token's owner.
	if res, text := f.do(t, "DELETE", "/api/v1/locks/"+strconv.FormatInt(f.lockID, 10), "{}", bearer(f.tokens[atoll.RoleOperator])...); res.StatusCode != 200 {
		t.Fatalf("operator unlock = %d %s", res.StatusCode, text)
	}
	if locks, _ := f.db.Locks(ctx); len(locks) != 0 {
		t.Errorf("locks after the operator's unlock = %v", locks)
	}
	ev, err := f.db.Events(ctx, 1)
	if err != nil || len(ev) != 1 || ev[0].Actor != "operator-user" {
		t.Errorf("unlock event = %+v, %v; want the token's owner as actor", ev, err)
	}
}

// The matrix has an entry for every route Handler registers, and no entry
// for a route that is not: a new route without one fails here. Handler
// registers every route through routeMux, which records its pattern
// (web/routes.go).
func TestRouteMatrixCoversEveryRoute(t *testing.T) {
	f := newAuthFixture(t, nil)
	registered := f.s.Patterns()
	if len(registered) < 50 {
		t.Fatalf("only %d patterns recorded: %v", len(registered), registered)
	}
	var inMatrix []string
	for _, rt := range routeMatrix(f, t) {
		inMatrix = append(inMatrix, rt.pattern)
	}
	for _, p := range registered {
		if !slices.Contains(inMatrix, p) {
			t.Errorf("route %q has no entry in the route × role matrix (routeMatrix in web/routematrix_test.go)", p)
		}
	}
	for _, p := range inMatrix {
		if !slices.Contains(registered, p) {
			t.Errorf("matrix entry %q is no registered route", p)
		}
	}
}

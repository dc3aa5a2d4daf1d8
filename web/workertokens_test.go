package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/mock"
	"github.com/atollhq/atoll/web"
)

// workerAdminFixture is the auth fixture with a mock WorkerAdmin that
// records the tokens it makes and revokes.
type workerAdminFixture struct {
	*authFixture
	wa      *mock.WorkerAdmin
	created []string // "name pool actor"
	revoked []int64
}

const workerSecret = "wsec-0123456789abcdef"

func newWorkerAdminFixture(t *testing.T) *workerAdminFixture {
	wf := &workerAdminFixture{}
	wf.wa = &mock.WorkerAdmin{
		WorkersFn: func(context.Context) (*atoll.WorkerOverview, error) { return workerOverview(), nil },
		CreateWorkerTokenFn: func(_ context.Context, name, pool, actor, source string) (*atoll.WorkerToken, string, error) {
			// As the store: it applies the rule.
			if err := atoll.CheckWorkerToken(name, pool); err != nil {
				return nil, "", err
			}
			wf.created = append(wf.created, name+" "+pool+" "+actor)
			return &atoll.WorkerToken{ID: 9, Name: name, Pool: pool, CreatedBy: actor}, workerSecret, nil
		},
		RevokeWorkerTokenFn: func(_ context.Context, id int64, actor, source string) error {
			if id != 3 {
				return atoll.Errorf(atoll.ENOTFOUND, "No worker token %d.", id)
			}
			wf.revoked = append(wf.revoked, id)
			return nil
		},
	}
	wf.authFixture = newAuthFixture(t, func(s *web.Server) { s.WorkerAdmin = wf.wa })
	return wf
}

// form posts body to path as role, as a browser does.
func (wf *workerAdminFixture) form(t *testing.T, role atoll.Role, path, body string, header ...string) (*http.Response, string) {
	t.Helper()
	h := append(bearer(wf.tokens[role]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	return wf.do(t, "POST", path, body, append(h, header...)...)
}

// flashPage is the page a redirect with a flash shows: the admin page
// read with the flash cookie the answer set.
func (wf *workerAdminFixture) flashPage(t *testing.T, res *http.Response) string {
	t.Helper()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin" {
		t.Fatalf("answer %d Location %q, want a 303 to /admin", res.StatusCode, res.Header.Get("Location"))
	}
	var cookie string
	for _, c := range res.Cookies() {
		if c.Name == "atoll_flash" {
			cookie = c.Name + "=" + c.Value
		}
	}
	_, body := wf.do(t, "GET", "/admin", "", append(bearer(wf.tokens[atoll.RoleAdmin]), "Accept", "text/html", "Cookie", cookie)...)
	return body
}

// The admin page lists the worker tokens with a revoke button for each
// live one; a new token's secret is shown once, on the page answering
// its creation, and never again.
func TestAdminWorkerTokens(t *testing.T) {
	wf := newWorkerAdminFixture(t)
	admin := append(bearer(wf.tokens[atoll.RoleAdmin]), "Accept", "text/html")
	res, body := wf.do(t, "GET", "/admin", "", admin...)
	if res.StatusCode != 200 {
		t.Fatalf("admin page = %d", res.StatusCode)
	}
	wantContains(t, body, `id="worker-tokens"`, "eu-runners", "w-eu-1", "v1.4.0", "old-us", "revoked",
		`action="/admin/worker-tokens/3/revoke"`, `action="/admin/worker-tokens"`, `name="pool"`)
	if strings.Contains(body, `action="/admin/worker-tokens/2/revoke"`) {
		t.Error("a revoked token has a revoke button")
	}

	res, body = wf.form(t, atoll.RoleAdmin, "/admin/worker-tokens", "name=+eu-runners-2+&pool=eu")
	if res.StatusCode != http.StatusCreated || strings.Count(body, workerSecret) != 1 || !strings.Contains(body, `id="new-worker-token"`) ||
		!strings.Contains(body, "shown only this once") {
		t.Fatalf("create = %d, secret shown %d times", res.StatusCode, strings.Count(body, workerSecret))
	}
	if len(wf.created) != 1 || wf.created[0] != "eu-runners-2 eu admin-user" {
		t.Errorf("created %q", wf.created)
	}
	if _, body := wf.do(t, "GET", "/admin", "", admin...); strings.Contains(body, workerSecret) {
		t.Error("the secret is shown again")
	}
	if strings.Contains(wf.logs.buf.String(), workerSecret) {
		t.Error("the secret is logged")
	}

	// A script gets JSON.
	res, text := wf.do(t, "POST", "/admin/worker-tokens", "name=ci&pool=us",
		append(bearer(wf.tokens[atoll.RoleAdmin]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json")...)
	if res.StatusCode != http.StatusCreated || !strings.Contains(text, `"token": "`+workerSecret+`"`) {
		t.Errorf("JSON create = %d %s", res.StatusCode, text)
	}

	// Bad input: the page says why, nothing is made.
	wf.created = nil
	for body, want := range map[string]string{
		"name=&pool=eu":         "Name the worker token",
		"name=x&pool=":          "Name the pool",
		"name=x&pool=local":     "the active node",
		"name=x&pool=Bad+Pool":  "is not a pool name",
		"name=x&name=y&pool=eu": "given 2 times",
		"name=" + strings.Repeat("n", 101) + "&pool=eu": "Name the worker token",
	} {
		res, _ := wf.form(t, atoll.RoleAdmin, "/admin/worker-tokens", body)
		if page := wf.flashPage(t, res); !strings.Contains(page, want) || strings.Contains(page, workerSecret) {
			t.Errorf("create %q: the page lacks %q", body, want)
		}
	}
	if len(wf.created) != 0 {
		t.Errorf("bad input created %q", wf.created)
	}

	// Revoke.
	res, _ = wf.form(t, atoll.RoleAdmin, "/admin/worker-tokens/3/revoke", "")
	if page := wf.flashPage(t, res); !strings.Contains(page, "Revoked the worker token eu-runners (pool eu)") || len(wf.revoked) != 1 {
		t.Errorf("revoke: revoked %v", wf.revoked)
	}
	for path, want := range map[string]string{"/admin/worker-tokens/77/revoke": "No worker token 77.", "/admin/worker-tokens/x/revoke": "Invalid worker token id."} {
		res, _ := wf.form(t, atoll.RoleAdmin, path, "")
		if page := wf.flashPage(t, res); !strings.Contains(page, want) {
			t.Errorf("%s: the page lacks %q", path, want)
		}
	}
	if len(wf.revoked) != 1 {
		t.Errorf("revoked %v", wf.revoked)
	}

	// The pools' failure leaves the rest of the page.
	wf.wa.WorkersFn = func(context.Context) (*atoll.WorkerOverview, error) {
		return nil, atoll.Errorf(atoll.EUNAVAILABLE, "Not on this node.")
	}
	if res, body := wf.do(t, "GET", "/admin", "", admin...); res.StatusCode != 200 ||
		!strings.Contains(body, "The worker tokens cannot be listed: Not on this node.") || !strings.Contains(body, "viewer-user") {
		t.Errorf("admin page with the pools failing = %d", res.StatusCode)
	}
	wf.wa.WorkersFn = func(context.Context) (*atoll.WorkerOverview, error) { return workerOverview(), nil }

	// Operators and viewers may do neither; nobody signed in neither.
	for _, role := range []atoll.Role{atoll.RoleViewer, atoll.RoleOperator} {
		for _, path := range []string{"/admin/worker-tokens", "/admin/worker-tokens/3/revoke"} {
			res, _ := wf.do(t, "POST", path, "name=x&pool=eu", append(bearer(wf.tokens[role]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json")...)
			if res.StatusCode != 403 {
				t.Errorf("%s as %s = %d", path, role, res.StatusCode)
			}
		}
	}
	if res, _ := wf.do(t, "POST", "/admin/worker-tokens", "name=x&pool=eu", "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json"); res.StatusCode != 401 {
		t.Errorf("create without a session = %d", res.StatusCode)
	}
	if len(wf.created) != 0 || len(wf.revoked) != 1 {
		t.Errorf("refused calls made tokens %q or revoked %v", wf.created, wf.revoked)
	}

	// Any role reads the workers page; only admins are pointed to /admin.
	for _, role := range []atoll.Role{atoll.RoleViewer, atoll.RoleAdmin} {
		res, body := wf.do(t, "GET", "/workers", "", append(bearer(wf.tokens[role]), "Accept", "text/html")...)
		if res.StatusCode != 200 || !strings.Contains(body, "w-eu-1") || strings.Contains(body, "/admin/worker-tokens/") ||
			strings.Contains(body, "admin page") != (role == atoll.RoleAdmin) {
			t.Errorf("workers page as %s = %d", role, res.StatusCode)
		}
	}
}

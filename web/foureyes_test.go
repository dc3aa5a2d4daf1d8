package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// planBy stores a newer plan of the fixture's project, run by user (its
// trigger), and returns its id.
func (f *approvalFixture) planBy(t *testing.T, user string) int64 {
	t.Helper()
	var id int64
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projID, HeadSHA: "abc", User: user}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		p := &atoll.Plan{JobID: j.ID, PullID: f.pullID, ProjectID: f.projID, HeadSHA: "abc",
			File: []byte("plan by " + user + " " + strconv.FormatInt(j.ID, 10)), ShowJSON: []byte("{}")}
		err := tx.InsertPlan(p)
		id = p.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// noDecision fails the test if plan id has a decision.
func (f *approvalFixture) noDecision(t *testing.T, id int64) {
	t.Helper()
	if d, err := f.db.PlanDecision(context.Background(), id); err != nil || d != nil {
		t.Fatalf("a refused approval was stored: %+v, %v", d, err)
	}
}

// apiError decodes an API error answer, which must be {"error": ...} alone.
func apiError(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body) != 1 {
		t.Fatalf("error body %s: %v", rec.Body, err)
	}
	return body["error"]
}

// With --approval-four-eyes, the refusal of the plan's trigger reaches
// every way of approving with its reason: the JSON API (403 and
// {"error"}), the htmx panel (403 in place) and a plain form post (a
// message on the page it returns to). Someone else approves.
func TestSecurityFourEyesRefusalReachesPageAndAPI(t *testing.T) {
	const refusal = "You triggered this plan; with four-eyes approval another person must approve it."
	f := newApprovalFixture(t)
	f.s.ApprovalFourEyes = true
	id := f.planBy(t, operatorU.Name) // olivia ran it from the dashboard
	sid := strconv.FormatInt(id, 10)

	rec := f.serve(operatorU, "POST", "/api/v1/plans/"+sid+"/approvals", `{"decision":"approve","reason":"mine"}`)
	if rec.Code != http.StatusForbidden || apiError(t, rec) != refusal {
		t.Fatalf("API approval by the trigger = %d %s", rec.Code, rec.Body)
	}
	f.noDecision(t, id)

	rec = f.serve(operatorU, "POST", "/plans/"+sid+"/approve", "reason=mine", "HX-Request", "true")
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), refusal) {
		t.Fatalf("htmx approval by the trigger = %d %s", rec.Code, rec.Body)
	}
	f.noDecision(t, id)

	rec = f.serve(operatorU, "POST", "/plans/"+sid+"/approve", "reason=mine")
	var flash *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "atoll_flash" {
			flash = c
		}
	}
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/plans/"+sid || flash == nil {
		t.Fatalf("form approval by the trigger = %d, Location %q, flash %v", rec.Code, rec.Header().Get("Location"), flash)
	}
	req := httptest.NewRequest("GET", "/plans/"+sid, nil)
	req.Header.Set("Accept", "text/html")
	req.AddCookie(flash)
	req = req.WithContext(atoll.NewContextWithUser(req.Context(), operatorU))
	page := httptest.NewRecorder()
	f.s.Handler().ServeHTTP(page, req)
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), refusal) {
		t.Fatalf("the plan page does not show the refusal: %d\n%s", page.Code, page.Body)
	}
	f.noDecision(t, id)

	if rec := f.serve(adminU, "POST", "/api/v1/plans/"+sid+"/approvals", `{"decision":"approve"}`); rec.Code != http.StatusCreated {
		t.Fatalf("approval by another person = %d %s", rec.Code, rec.Body)
	}
}

// Without the option (the default), the trigger approves its own plan.
func TestSecurityFourEyesOffTriggerApproves(t *testing.T) {
	f := newApprovalFixture(t)
	id := strconv.FormatInt(f.planBy(t, operatorU.Name), 10)
	if rec := f.serve(operatorU, "POST", "/api/v1/plans/"+id+"/approvals", `{"decision":"approve"}`); rec.Code != http.StatusCreated {
		t.Fatalf("approval by the trigger without four-eyes = %d %s", rec.Code, rec.Body)
	}
}

// An account whose VCS login is the pull request's author (alice) is
// refused as the author, on the API, whatever the account is called.
func TestSecurityMappedAuthorRefusedByAPI(t *testing.T) {
	ctx := context.Background()
	f := newApprovalFixture(t)
	u, err := f.db.CreateUser(ctx, atoll.NewUser{Name: "alice@example.com", Role: atoll.RoleOperator, Source: atoll.UserSourceOIDC, OIDCSubject: "iss a"}, "adam", "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.SetUserVCSLogins(ctx, u.ID, []string{"alice"}, "adam", "test"); err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(f.planID, 10)
	rec := f.serve(u, "POST", "/api/v1/plans/"+id+"/approvals", `{"decision":"approve"}`)
	if want := "You opened this pull request as alice, one of your VCS logins: someone else must approve its plans."; rec.Code != http.StatusForbidden || apiError(t, rec) != want {
		t.Fatalf("approval by the author's account = %d %s", rec.Code, rec.Body)
	}
	f.noDecision(t, f.planID)
}

// --oidc-vcs-login-claim: the claim's login is added to the OIDC account
// at sign-in, so the account named by e-mail is recognised as the pull
// request's author (alice) and refused.
func TestSecurityOIDCVCSLoginClaim(t *testing.T) {
	p := newOIDCProvider(t)
	p.extra = map[string]any{"github_login": "alice"}
	p.email = "alice@example.com"
	f := newAuthFixture(t, func(s *web.Server) {
		s.OIDC = &web.OIDC{Issuer: p.srv.URL, ClientID: p.clientID, ClientSecret: p.clientSecret,
			OperatorUsers: []string{"alice@example.com"}, VCSLoginClaim: "github_login"}
	})
	res := oidcSignIn(t, f.srv.URL, nil)
	res.Body.Close()
	c := sessionCookieOf(res)
	if res.StatusCode != http.StatusSeeOther || c == nil {
		t.Fatalf("callback: %d, cookie %+v", res.StatusCode, c)
	}
	a, err := f.db.UserByName(context.Background(), "alice@example.com")
	if err != nil || !slices.Equal(a.VCSLogins, []string{"alice"}) || a.Role != atoll.RoleOperator {
		t.Fatalf("account = %+v, %v", a, err)
	}
	plans, err := f.db.LatestPlans(context.Background(), f.pullID)
	if err != nil || len(plans) != 1 {
		t.Fatalf("plans = %v, %v", plans, err)
	}
	res, body := f.do(t, "POST", "/api/v1/plans/"+strconv.FormatInt(plans[0].ID, 10)+"/approvals", `{"decision":"approve"}`,
		"Cookie", "atoll_session="+c.Value)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, `"You opened this pull request as alice, one of your VCS logins: someone else must approve its plans."`) {
		t.Fatalf("approval by the author's OIDC account = %d %s", res.StatusCode, body)
	}
}

// An admin sets a user's VCS logins on the admin page (or the same route
// with JSON answers); a bad login is 400 and changes nothing; the page
// shows them.
func TestAdminSetsVCSLogins(t *testing.T) {
	ctx := context.Background()
	f := newAuthFixture(t, nil)
	u, err := f.db.UserByName(ctx, "operator-user")
	if err != nil {
		t.Fatal(err)
	}
	path := "/admin/users/" + strconv.FormatInt(u.ID, 10) + "/vcs-logins"
	form := func(v string) string { return url.Values{"vcs_logins": {v}}.Encode() }
	do := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", f.srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.tokens[atoll.RoleAdmin])
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		res, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]string
		json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out["message"] + out["error"]
	}
	if code, msg := do(form("octo-olivia, olivia@corp.example octo-olivia")); code != 200 || msg != "VCS logins of operator-user: octo-olivia, olivia@corp.example." {
		t.Fatalf("set logins = %d %q", code, msg)
	}
	if a, _ := f.db.UserByID(ctx, u.ID); !slices.Equal(a.VCSLogins, []string{"octo-olivia", "olivia@corp.example"}) {
		t.Fatalf("logins = %q", a.VCSLogins)
	}
	if code, msg := do(form("ok, <b>")); code != 400 || !strings.Contains(msg, "is not a VCS login") {
		t.Fatalf("bad login = %d %q", code, msg)
	}
	if a, _ := f.db.UserByID(ctx, u.ID); len(a.VCSLogins) != 2 {
		t.Fatalf("a refused change changed the logins to %q", a.VCSLogins)
	}
	_, page := f.do(t, "GET", "/admin", "", append(bearer(f.tokens[atoll.RoleAdmin]), "Accept", "text/html")...)
	if !strings.Contains(page, `name="vcs_logins" value="octo-olivia, olivia@corp.example"`) {
		t.Fatalf("the admin page does not show the logins:\n%s", page)
	}
	if code, msg := do(form("")); code != 200 || msg != "operator-user has no VCS logins now." {
		t.Fatalf("clear logins = %d %q", code, msg)
	}
	if a, _ := f.db.UserByID(ctx, u.ID); len(a.VCSLogins) != 0 {
		t.Fatalf("cleared logins = %q", a.VCSLogins)
	}
}

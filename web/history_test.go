package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/local"
	"github.com/atollhq/atoll/web"
)

// historyFixture: two repositories, three pull requests, four locks
// (pull 7 holds two), and a server whose local VCS keeps comments in the
// database.
type historyFixture struct {
	db    *store.DB
	srv   *web.Server
	h     http.Handler
	pulls map[string]int64 // "acme/infra#7" → pull id
	locks map[string]int64 // "acme/infra#7 staging" → lock id
}

func newHistoryFixture(t *testing.T) *historyFixture {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := now
	db := storetest.Open(t, storetest.Clock(func() time.Time { return clock })) // set before each write: Update hands over through a channel
	f := &historyFixture{db: db, pulls: map[string]int64{}, locks: map[string]int64{}}
	type lockSpec struct {
		repo     string
		pull     int
		dir      string
		user     string
		hoursAgo int
	}
	specs := []lockSpec{
		{"acme/infra", 7, "staging", "alice", 1},
		{"acme/infra", 7, "production", "alice", 30},
		{"acme/infra", 8, "network", "bob", 72},
		{"acme/apps", 3, "staging", "carol", 5},
	}
	for _, sp := range specs {
		owner, name, _ := strings.Cut(sp.repo, "/")
		clock = now.Add(-time.Duration(sp.hoursAgo) * time.Hour)
		err := db.Update(ctx, func(tx *store.Tx) error {
			repo, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: owner, Name: name})
			if err != nil {
				return err
			}
			pull, err := tx.UpsertPull(repo, atoll.Pull{Number: sp.pull, HeadSHA: "abc", Author: sp.user})
			if err != nil {
				return err
			}
			project, err := tx.UpsertProject(repo, atoll.Project{Dir: sp.dir, Workspace: "default"})
			if err != nil {
				return err
			}
			f.pulls[fmt.Sprintf("%s#%d", sp.repo, sp.pull)] = pull
			_, err = tx.TakeLock(project, pull, sp.user)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		locks, err := db.Locks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locks {
			f.locks[fmt.Sprintf("%s#%d %s", l.Repo, l.Pull, l.Dir)] = l.ID
		}
	}
	clock = now
	f.srv = &web.Server{DB: db, Now: db.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Providers: map[string]vcs.Provider{atoll.VCSLocal: &local.Provider{DB: db}}}
	// The runner tells the pull requests of unlocks, through the providers.
	f.srv.Unlocks = &runner.Runner{DB: db, Providers: f.srv.Providers}
	f.h = f.srv.Handler()
	return f
}

// do serves one request as user (nil: nobody signed in).
func (f *historyFixture) do(t *testing.T, user *atoll.User, method, target, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if strings.Contains(contentType, "form") || method == http.MethodGet && !strings.HasPrefix(target, "/api/") {
		req.Header.Set("Accept", "text/html")
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if user != nil {
		req = req.WithContext(atoll.NewContextWithUser(req.Context(), user))
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

func (f *historyFixture) heldLocks(t *testing.T) []string {
	t.Helper()
	locks, err := f.db.Locks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range locks {
		out = append(out, fmt.Sprintf("%s#%d %s", l.Repo, l.Pull, l.Dir))
	}
	slices.Sort(out)
	return out
}

func (f *historyFixture) comments(t *testing.T, pull string) []string {
	t.Helper()
	cs, err := f.db.Comments(context.Background(), f.pulls[pull])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.Body)
	}
	return out
}

func form(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v.Encode()
}

// Nobody signed in gets 401, a viewer 403, and no lock is released nor
// any pull request told, in either shape (form or JSON).
func TestUnlockLocksNeedsOperator(t *testing.T) {
	f := newHistoryFixture(t)
	before := f.heldLocks(t)
	id := fmt.Sprint(f.locks["acme/infra#7 staging"])
	for _, c := range []struct {
		user *atoll.User
		want int
	}{{nil, http.StatusUnauthorized}, {vera, http.StatusForbidden}} {
		for _, shape := range []struct{ ct, body string }{
			{formType, form("id", id, "confirm", "1", "back", "/locks")},
			{"application/json", `{"ids": [` + id + `], "confirm": true}`},
		} {
			rec := f.do(t, c.user, http.MethodPost, "/locks/unlock", shape.ct, shape.body)
			if rec.Code != c.want {
				t.Errorf("%v %s: status %d, want %d: %s", c.user, shape.ct, rec.Code, c.want, rec.Body)
			}
		}
	}
	if after := f.heldLocks(t); !slices.Equal(after, before) {
		t.Errorf("locks changed: %v → %v", before, after)
	}
	if cs := f.comments(t, "acme/infra#7"); len(cs) != 0 {
		t.Errorf("the pull request was told: %q", cs)
	}
}

// A form posted without confirm=1 (no JavaScript) gets a page listing the
// locks it would release, with the form that confirms; nothing changes.
func TestUnlockLocksAsksToConfirm(t *testing.T) {
	f := newHistoryFixture(t)
	before := f.heldLocks(t)
	rec := f.do(t, alice, http.MethodPost, "/locks/unlock", formType,
		form("id", fmt.Sprint(f.locks["acme/infra#7 staging"]), "id", fmt.Sprint(f.locks["acme/apps#3 staging"]), "id", "999", "back", "/locks?user=alice"))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("status %d %s: %s", rec.Code, rec.Header().Get("Content-Type"), body)
	}
	for _, want := range []string{"Unlock 2 locks?", "acme/infra", "acme/apps", `name="confirm" value="1"`,
		`name="id" value="` + fmt.Sprint(f.locks["acme/infra#7 staging"]) + `"`, "#999", `href="/locks?user=alice"`} {
		if !strings.Contains(body, want) {
			t.Errorf("confirmation page lacks %q", want)
		}
	}
	if strings.Contains(body, `name="id" value="999"`) {
		t.Error("the confirmation form would post the missing lock again")
	}
	if after := f.heldLocks(t); !slices.Equal(after, before) {
		t.Errorf("locks changed: %v → %v", before, after)
	}
	// JSON must confirm too.
	rec = f.do(t, alice, http.MethodPost, "/locks/unlock", "application/json", `{"ids": [1]}`)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "confirm") {
		t.Errorf("JSON without confirm: %d %s", rec.Code, rec.Body)
	}
}

// An operator's confirmed form releases exactly the chosen locks, as
// herself, tells each pull request once who unlocked what, and comes back
// with a message.
func TestUnlockLocksReleasesTheChosenOnes(t *testing.T) {
	f := newHistoryFixture(t)
	rec := f.do(t, alice, http.MethodPost, "/locks/unlock", formType, form(
		"id", fmt.Sprint(f.locks["acme/infra#7 staging"]),
		"id", fmt.Sprint(f.locks["acme/infra#7 production"]),
		"id", fmt.Sprint(f.locks["acme/infra#8 network"]),
		"confirm", "1", "back", "/locks?repo=acme/infra", "user", "mallory"))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/locks?repo=acme/infra" {
		t.Fatalf("status %d, location %q: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if got := f.heldLocks(t); !slices.Equal(got, []string{"acme/apps#3 staging"}) {
		t.Errorf("held after: %v", got)
	}
	c7 := f.comments(t, "acme/infra#7")
	if len(c7) != 1 || !strings.Contains(c7[0], "Unlocked by alice from the dashboard") ||
		!strings.Contains(c7[0], "staging/default") || !strings.Contains(c7[0], "production/default") {
		t.Errorf("pull 7 was told %q", c7)
	}
	if c8 := f.comments(t, "acme/infra#8"); len(c8) != 1 || !strings.Contains(c8[0], "Unlocked by alice from the dashboard") {
		t.Errorf("pull 8 was told %q", c8)
	}
	if c3 := f.comments(t, "acme/apps#3"); len(c3) != 0 {
		t.Errorf("pull 3 (not unlocked) was told %q", c3)
	}
	events, err := f.db.Events(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 {
		t.Errorf("%d audit events, want 3", len(events))
	}
	for _, e := range events {
		if e.Actor != "alice" || e.Action != "lock.delete" {
			t.Errorf("event %+v: want actor alice (the session's user)", e)
		}
	}
	// The message is shown once on the page it came back to.
	var flash *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "atoll_flash" {
			flash = c
		}
	}
	if flash == nil {
		t.Fatal("no flash message")
	}
	req := httptest.NewRequest(http.MethodGet, "/locks?repo=acme/infra", nil)
	req.AddCookie(flash)
	req = req.WithContext(atoll.NewContextWithUser(req.Context(), alice))
	page := httptest.NewRecorder()
	f.h.ServeHTTP(page, req)
	if body := page.Body.String(); !strings.Contains(body, "Unlocked 3 locks: acme/infra staging/default (#7), acme/infra production/default (#7), acme/infra network/default (#8).") {
		t.Errorf("the locks page does not show the message:\n%s", body)
	}
}

// Per-lock outcome: locks no longer held are reported and the others are
// released; when none was held the answer is 404.
func TestUnlockLocksReportsMissingOnes(t *testing.T) {
	f := newHistoryFixture(t)
	id := f.locks["acme/apps#3 staging"]
	rec := f.do(t, alice, http.MethodPost, "/locks/unlock", "application/json", fmt.Sprintf(`{"ids": [%d, 999, %d], "confirm": true}`, id, id))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var res struct {
		Message  string        `json:"message"`
		Unlocked []*atoll.Lock `json:"unlocked"`
		Missing  []int64       `json:"missing"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Unlocked) != 1 || res.Unlocked[0].ID != id || !slices.Equal(res.Missing, []int64{999}) ||
		!strings.Contains(res.Message, "Not held any more: lock 999 is.") {
		t.Errorf("answer %+v", res)
	}
	rec = f.do(t, alice, http.MethodPost, "/locks/unlock", "application/json", fmt.Sprintf(`{"ids": [%d], "confirm": true}`, id))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "Nothing was unlocked") {
		t.Errorf("again: %d %s", rec.Code, rec.Body)
	}
	rec = f.do(t, alice, http.MethodPost, "/locks/unlock", formType, form("confirm", "1"))
	if rec.Code != http.StatusSeeOther {
		t.Errorf("no id: %d", rec.Code)
	}
}

func TestLocksPageFilters(t *testing.T) {
	f := newHistoryFixture(t)
	all := []string{"#7", "#8", "#3"}
	cases := []struct {
		query string
		want  []string // pull request links shown
		rows  int
	}{
		{"", all, 4},
		{"?repo=acme/infra", []string{"#7", "#8"}, 3},
		{"?repo=acme/infra&pull=7", []string{"#7"}, 2},
		{"?pull=3", []string{"#3"}, 1},
		{"?user=bob", []string{"#8"}, 1},
		{"?older=24h", []string{"#7", "#8"}, 2},
		{"?older=2d", []string{"#8"}, 1},
		{"?older=2h&user=carol", []string{"#3"}, 1},
		{"?user=nobody", nil, 0},
	}
	for _, c := range cases {
		rec := f.do(t, alice, http.MethodGet, "/locks"+c.query, "", "")
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d", c.query, rec.Code)
			continue
		}
		if n := strings.Count(body, `type="checkbox" name="id"`); n != c.rows {
			t.Errorf("%s: %d rows, want %d", c.query, n, c.rows)
		}
		for _, pr := range all {
			if has := strings.Contains(body, ">"+pr+"</a>"); has != slices.Contains(c.want, pr) {
				t.Errorf("%s: shows %s = %v", c.query, pr, has)
			}
		}
	}
	// A viewer sees the locks but nothing to unlock them with.
	rec := f.do(t, vera, http.MethodGet, "/locks", "", "")
	if body := rec.Body.String(); rec.Code != http.StatusOK || strings.Contains(body, `name="id"`) || !strings.Contains(body, ">#8</a>") {
		t.Errorf("viewer: %d, checkboxes or locks wrong", rec.Code)
	}
	for _, q := range []string{"?older=soon", "?pull=x", "?repo=infra"} {
		if rec := f.do(t, alice, http.MethodGet, "/locks"+q, "", ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Invalid") && !strings.Contains(rec.Body.String(), "must be") {
			t.Errorf("%s: %d, want 400 with a message", q, rec.Code)
		}
	}
}

// The locks page shows 200 locks at a time, oldest first, each lock on one
// page only.
func TestLocksPagePages(t *testing.T) {
	f := newHistoryFixture(t)
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		p, err := f.db.PullByNumber(context.Background(), "acme/infra", 7)
		if err != nil {
			return err
		}
		for i := range 201 {
			project, err := tx.UpsertProject(p.RepoID, atoll.Project{Dir: fmt.Sprint("stack", i), Workspace: "default"})
			if err != nil {
				return err
			}
			if _, err := tx.TakeLock(project, p.ID, "alice"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	box := regexp.MustCompile(`type="checkbox" name="id" value="(\d+)"`)
	seen := map[string]bool{}
	rows := 0
	path := "/locks"
	for pages := 1; ; pages++ {
		body := f.do(t, alice, http.MethodGet, path, "", "").Body.String()
		for _, m := range box.FindAllStringSubmatch(body, -1) {
			if seen[m[1]] {
				t.Errorf("lock %s on two pages", m[1])
			}
			seen[m[1]] = true
			rows++
		}
		if pages > 1 && !strings.Contains(body, `rel="first"`) {
			t.Errorf("page %d has no link to the first", pages)
		}
		m := next.FindStringSubmatch(body)
		if m == nil {
			if pages != 2 {
				t.Errorf("%d pages, want 2", pages)
			}
			break
		}
		if pages == 1 && rows != 200 {
			t.Errorf("first page: %d rows", rows)
		}
		path = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	if rows != 205 {
		t.Errorf("%d locks shown, want 205", rows)
	}
}

// The API's unlock tells the pull request too.
func TestAPIUnlockTellsThePullRequest(t *testing.T) {
	f := newHistoryFixture(t)
	rec := f.do(t, &atoll.User{Name: "ci", Role: atoll.RoleOperator}, http.MethodDelete, fmt.Sprintf("/api/v1/locks/%d", f.locks["acme/infra#8 network"]), "application/json", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("%d: %s", rec.Code, rec.Body)
	}
	if cs := f.comments(t, "acme/infra#8"); len(cs) != 1 || !strings.Contains(cs[0], "Unlocked by ci from the API") || !strings.Contains(cs[0], "network/default") {
		t.Errorf("pull 8 was told %q", cs)
	}
}

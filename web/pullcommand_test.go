package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
)

const (
	commandsPath = "/repos/acme/infra/pulls/7/commands"
	formType     = "application/x-www-form-urlencoded"
	jsonType     = "application/json"
)

// Only operators send commands: nobody signed in gets 401, a viewer 403,
// and nothing is queued or commented either way.
func TestPullCommandNeedsOperator(t *testing.T) {
	f := newPullFixture(t)
	for _, tc := range []struct {
		name   string
		user   *atoll.User
		status int
	}{
		{"nobody", nil, http.StatusUnauthorized},
		{"viewer", vera, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ct := range []string{jsonType, formType} {
				body := `{"command":"plan"}`
				if ct == formType {
					body = "command=plan"
				}
				rec := f.do(t, "POST", commandsPath, ct, body, tc.user, "Accept", "application/json")
				if rec.Code != tc.status {
					t.Errorf("%s: status %d, want %d: %s", ct, rec.Code, tc.status, rec.Body)
				}
			}
		})
	}
	if q := f.queued(t); len(q) != 0 {
		t.Errorf("refused commands queued %d requests", len(q))
	}
	if cs, err := f.db.Comments(context.Background(), f.pullID); err != nil || len(cs) != 0 {
		t.Errorf("refused commands left comments: %v %v", cs, err)
	}
}

// An operator's command is exactly the comment a user would write, queued
// as that user, and on a local repository also added to the conversation.
func TestPullCommandQueuesComment(t *testing.T) {
	for _, tc := range []struct {
		name, body, ct, want string
	}{
		{"plan all", "command=plan", formType, "atlantis plan"},
		{"apply all", `{"command":"apply"}`, jsonType, "atlantis apply"},
		{"named project", "command=plan&project=ready", formType, "atlantis plan -p ready"},
		{"apply named project", `{"command":"apply","project":"ready"}`, jsonType, "atlantis apply -p ready"},
		{"dir and workspace", "command=apply&dir=planning&workspace=staging", formType, "atlantis apply -d planning -w staging"},
		{"dir, default workspace", `{"command":"plan","dir":"stale"}`, jsonType, "atlantis plan -d stale -w default"},
		{"quoted name", "command=plan&project=" + url.QueryEscape("o'brien"), formType, `atlantis plan -p 'o'\''brien'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPullFixture(t)
			rec := f.do(t, "POST", commandsPath, tc.ct, tc.body, alice, "Accept", "application/json")
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			var out struct {
				RequestID int64  `json:"request_id"`
				Comment   string `json:"comment"`
				Follow    string `json:"follow"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatalf("%v: %s", err, rec.Body)
			}
			q := f.queued(t)
			if len(q) != 1 {
				t.Fatalf("%d requests queued, want 1", len(q))
			}
			if q[0].Comment != tc.want || q[0].User != "alice" || q[0].Kind != atoll.RequestComment || q[0].PullID != f.pullID {
				t.Errorf("queued %+v, want comment %q by alice", q[0], tc.want)
			}
			if out.RequestID != q[0].ID || out.Comment != tc.want || !strings.HasPrefix(out.Follow, "/repos/acme/infra/pulls/7?") {
				t.Errorf("answer %+v", out)
			}
			cs, err := f.db.Comments(context.Background(), f.pullID)
			if err != nil || len(cs) != 1 || cs[0].Author != "alice" || cs[0].Body != tc.want {
				t.Errorf("conversation = %+v, %v; want alice's %q", cs, err, tc.want)
			}
			if q[0].CommentID != itoa(cs[0].ID) {
				t.Errorf("request comment id %q, want %d", q[0].CommentID, cs[0].ID)
			}
		})
	}
}

// The same command answers each client in its shape: htmx gets the notice
// in place, a plain form a 303 to the row with a message, the API JSON.
func TestPullCommandAnswers(t *testing.T) {
	f := newPullFixture(t)
	ready := itoa(f.projects["ready"])

	rec := f.do(t, "POST", commandsPath, formType, "command=plan&project=ready", alice, "HX-Request", "true")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("htmx: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	wantContains(t, rec.Body.String(), "Plan queued as request #1",
		`hx-get="/repos/acme/infra/pulls/7?for=`+ready+`&amp;request=1&amp;section=notice"`, `hx-trigger="atoll:changed"`,
		`data-live-topics="job" data-live-repo="acme/infra" data-live-pull="7"`)
	if strings.Contains(rec.Body.String(), "<html") {
		t.Error("htmx got a whole page")
	}
	if u := rec.Header().Get("HX-Replace-Url"); u != "/repos/acme/infra/pulls/7?for="+ready+"&request=1" {
		t.Errorf("htmx: HX-Replace-Url %q, want the page showing the outcome", u)
	}

	rec = f.do(t, "POST", commandsPath, formType, "command=apply", alice, "Accept", "text/html")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("form: status %d", rec.Code)
	}
	if loc := rec.Header().Get("Location"); loc != "/repos/acme/infra/pulls/7?for=all&request=2#projects" {
		t.Errorf("form: Location %q", loc)
	}
	if c := rec.Header().Get("Set-Cookie"); !strings.Contains(c, "atoll_flash=") || !strings.Contains(c, url.QueryEscape("ok:Apply queued as request #2.")) {
		t.Errorf("form: flash cookie %q", c)
	}

	rec = f.do(t, "POST", commandsPath, jsonType, `{"command":"plan"}`, alice)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"comment": "atlantis plan"`) {
		t.Errorf("JSON: %d %s", rec.Code, rec.Body)
	}
	if n := len(f.queued(t)); n != 3 {
		t.Errorf("%d requests queued, want 3", n)
	}
}

// Anything but a command and one of the pull request's projects is
// refused with a clear message, and nothing is queued: no text of the
// request reaches a comment.
func TestPullCommandRejects(t *testing.T) {
	f := newPullFixture(t)
	for _, tc := range []struct {
		name, ct, body, msg string
	}{
		{"unknown command", jsonType, `{"command":"destroy"}`, "command must be plan or apply"},
		{"no command", formType, "project=ready", "command must be plan or apply"},
		{"unlock is not a button here", formType, "command=unlock", "command must be plan or apply"},
		{"unknown project", jsonType, `{"command":"plan","project":"prod"}`, `no project named \"prod\"`},
		{"flag injection", formType, "command=plan&project=" + url.QueryEscape("ready -- -destroy"), "no project named"},
		{"comment injection", formType, "command=apply&dir=" + url.QueryEscape("ready\natlantis unlock"), "no project in dir"},
		{"wrong workspace", formType, "command=plan&dir=planning&workspace=default", "no project in dir"},
		{"name the grammar refuses", formType, "command=plan&project=has+space", "cannot be named in a comment"},
		{"both", jsonType, `{"command":"plan","project":"ready","dir":"ready"}`, "not both"},
		{"workspace alone", formType, "command=plan&workspace=staging", "workspace needs dir"},
		{"unknown field", jsonType, `{"command":"plan","comment":"atlantis unlock"}`, "Body must be JSON"},
		{"not JSON", jsonType, `atlantis plan`, "Body must be JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, "POST", commandsPath, tc.ct, tc.body, alice, "Accept", "application/json")
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.msg) {
				t.Errorf("status %d %s, want 400 saying %q", rec.Code, rec.Body, tc.msg)
			}
		})
	}
	// A plain form is sent back to the page with the message.
	rec := f.do(t, "POST", commandsPath, formType, "command=plan&project=prod", alice, "Accept", "text/html")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/repos/acme/infra/pulls/7" ||
		!strings.Contains(rec.Header().Get("Set-Cookie"), url.QueryEscape(`error:This pull request has no project named "prod".`)) {
		t.Errorf("form: %d %q %q", rec.Code, rec.Header().Get("Location"), rec.Header().Get("Set-Cookie"))
	}
	// htmx gets the message in place, with the real status.
	rec = f.do(t, "POST", commandsPath, formType, "command=plan&project=prod", alice, "HX-Request", "true")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `class="flash"`) || strings.Contains(rec.Body.String(), "<html") {
		t.Errorf("htmx: %d %s", rec.Code, rec.Body)
	}
	// Refusals to htmx are messages in place too, not pages.
	rec = f.do(t, "POST", commandsPath, formType, "command=plan", vera, "HX-Request", "true")
	if rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "<html") || !strings.Contains(rec.Body.String(), "operator role") {
		t.Errorf("htmx viewer: %d %s", rec.Code, rec.Body)
	}
	// Unknown pull requests.
	if rec := f.do(t, "POST", "/repos/acme/infra/pulls/8/commands", jsonType, `{"command":"plan"}`, alice); rec.Code != http.StatusNotFound {
		t.Errorf("unknown pull: %d", rec.Code)
	}
	if q := f.queued(t); len(q) != 0 {
		t.Errorf("rejected commands queued %d requests: %+v", len(q), q[0])
	}
	if cs, _ := f.db.Comments(context.Background(), f.pullID); len(cs) != 0 {
		t.Errorf("rejected commands left %d comments", len(cs))
	}
}

// A closed pull request plans and applies nothing.
func TestPullCommandClosedPull(t *testing.T) {
	f := newPullFixture(t)
	ctx := context.Background()
	pull, err := f.db.PullByNumber(ctx, "acme/infra", 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := closePull(ctx, f, pull); err != nil {
		t.Fatal(err)
	}
	rec := f.do(t, "POST", commandsPath, jsonType, `{"command":"plan"}`, alice)
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "closed") {
		t.Errorf("status %d %s, want 409", rec.Code, rec.Body)
	}
	if q := f.queued(t); len(q) != 0 {
		t.Errorf("queued %d", len(q))
	}
	page := f.do(t, "GET", "/repos/acme/infra/pulls/7", "", "", alice).Body.String()
	if strings.Contains(page, `name="command"`) {
		t.Error("a closed pull request still offers Plan and Apply")
	}
	wantContains(t, row(t, page, f.projects["ready"]), "Discarded: the pull request was closed.")
}

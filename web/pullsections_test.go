package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// The pull request page is made of live sections, each re-fetched alone
// (?section=NAME) on changes of its topics for this pull request only.
func TestPullPageSections(t *testing.T) {
	f := newPullFixture(t)
	page := f.do(t, "GET", "/repos/acme/infra/pulls/7", "", "", alice).Body.String()
	// Each section carries the change mark the page was read at.
	m := regexp.MustCompile(`<body data-changes="(:[0-9]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page carries no change mark")
	}
	sections := []struct{ name, topics, content string }{
		{"head", "pull approval", "Buckets"},
		{"statuses", "job pull", "Commit statuses"},
		{"projects", "job lock plan approval pull freeze", `id="project-` + itoa(f.projects["ready"]) + `"`},
		{"jobs", "job", "Jobs"},
		{"locks", "lock", `action="/locks/unlock"`},
		{"conversation", "pull", "Conversation"},
	}
	for _, sec := range sections {
		t.Run(sec.name, func(t *testing.T) {
			wantContains(t, page, `<section id="section-`+sec.name+`" class="live-section" hx-get="/repos/acme/infra/pulls/7?section=`+sec.name+
				`" hx-trigger="atoll:changed" hx-swap="innerHTML" hx-sync="this:queue last" data-live-topics="`+sec.topics+
				`" data-live-repo="acme/infra" data-live-pull="7" data-changes="`+m[1]+`">`)
			rec := f.do(t, "GET", "/repos/acme/infra/pulls/7?section="+sec.name, "", "", vera)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || strings.Contains(body, "<html") || strings.Contains(body, "<section id=\"section-") {
				t.Fatalf("status %d, want the section's content alone: %.300s", rec.Code, body)
			}
			wantContains(t, body, sec.content)
		})
	}
	// The comment box is outside every section: a refresh never takes what
	// is being typed.
	if i, j := strings.Index(page, `id="section-conversation"`), strings.Index(page, `<form id="comment"`); i < 0 || j < i {
		t.Errorf("comment form at %d, conversation at %d", j, i)
	}
	if strings.Contains(page, "data-live-main") {
		t.Error("the page is still re-fetched whole")
	}
	// A new comment shows in the conversation section.
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		_, err := tx.AddComment(f.pullID, "bob", "looks good to me")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, f.do(t, "GET", "/repos/acme/infra/pulls/7?section=conversation", "", "", vera).Body.String(), "looks good to me")
	if rec := f.do(t, "GET", "/repos/acme/infra/pulls/7?section=nope", "", "", vera); rec.Code != http.StatusBadRequest {
		t.Errorf("unknown section: status %d", rec.Code)
	}
}

// The notice of a command is re-fetched alone (?section=notice) while its
// request can change, and stops following once everything is final.
func TestPullNoticeSection(t *testing.T) {
	f := newPullFixture(t)
	rec := f.do(t, "POST", commandsPath, jsonType, `{"command":"plan","project":"ready"}`, alice)
	if rec.Code != http.StatusOK {
		t.Fatalf("command: %d %s", rec.Code, rec.Body)
	}
	var out struct {
		RequestID int64 `json:"request_id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	path := "/repos/acme/infra/pulls/7?section=notice&request=" + itoa(out.RequestID) + "&for=" + itoa(f.projects["ready"])
	notice := f.do(t, "GET", path, "", "", vera).Body.String()
	if !strings.HasPrefix(strings.TrimSpace(notice), `<div class="notice"`) || strings.Contains(notice, "<article") {
		t.Fatalf("notice section is not the notice alone: %s", notice)
	}
	wantContains(t, notice, "Plan queued as request #"+itoa(out.RequestID), `data-live-topics="job"`, `hx-trigger="atoll:changed"`)

	ctx := context.Background()
	if _, err := f.db.ClaimRequest(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	wantContains(t, f.do(t, "GET", path, "", "", vera).Body.String(), "Plan running as request #"+itoa(out.RequestID))
	if err := finishRequest(ctx, f, out.RequestID); err != nil {
		t.Fatal(err)
	}
	final := f.do(t, "GET", path, "", "", vera).Body.String()
	wantContains(t, final, "notice-final", "nothing ran")
	if strings.Contains(final, "hx-get") || strings.Contains(final, "data-live-topics") {
		t.Errorf("a final notice still follows changes: %s", final)
	}
	// for=all, and a request of no pull request of this page: nothing.
	wantContains(t, f.do(t, "GET", "/repos/acme/infra/pulls/7?section=notice&for=all&request="+itoa(out.RequestID), "", "", vera).Body.String(),
		"Plan request #"+itoa(out.RequestID)+" done")
	if body := f.do(t, "GET", "/repos/acme/infra/pulls/7?section=notice&for=all&request=999", "", "", vera).Body.String(); strings.TrimSpace(body) != "" {
		t.Errorf("notice of an unknown request: %q", body)
	}
}

// The comment box posts form field body as the signed-in user through the
// same code as the JSON API, answering in each client's shape; an empty
// comment or a viewer changes nothing.
func TestPullCommentForm(t *testing.T) {
	f := newPullFixture(t)
	const path = "/repos/acme/infra/pulls/7/comment"
	comments := func() []atoll.PullComment {
		cs, err := f.db.Comments(context.Background(), f.pullID)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}

	rec := f.do(t, "POST", path, formType, "body=atlantis+plan+-d+stale", alice, "Accept", "text/html")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/repos/acme/infra/pulls/7#comment" ||
		!strings.Contains(rec.Header().Get("Set-Cookie"), "Comment+posted") {
		t.Fatalf("form: %d %q %q", rec.Code, rec.Header().Get("Location"), rec.Header().Get("Set-Cookie"))
	}
	cs := comments()
	if len(cs) != 1 || cs[0].Author != "alice" || cs[0].Body != "atlantis plan -d stale" {
		t.Fatalf("conversation = %+v", cs)
	}
	if q := f.queued(t); len(q) != 1 || q[0].Comment != "atlantis plan -d stale" || q[0].User != "alice" || q[0].CommentID != itoa(cs[0].ID) {
		t.Fatalf("queued = %+v", q)
	}

	rec = f.do(t, "POST", path, formType, "body=just+a+note", alice, "HX-Request", "true")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Comment posted.") || strings.Contains(rec.Body.String(), "<html") {
		t.Fatalf("htmx: %d %s", rec.Code, rec.Body)
	}
	if cs := comments(); len(cs) != 2 || cs[1].Body != "just a note" || cs[1].Author != "alice" {
		t.Fatalf("conversation = %+v", cs)
	}

	// Refused: nothing is added or queued.
	queued := len(f.queued(t))
	for _, c := range []struct {
		name, body string
		user       *atoll.User
		status     int
		says       string
	}{
		{"empty", "body=+++", alice, http.StatusBadRequest, "Comment body must be"},
		{"too long", "body=" + strings.Repeat("x", 65537), alice, http.StatusBadRequest, "Comment body must be"},
		{"viewer", "body=atlantis+apply", vera, http.StatusForbidden, "operator"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := f.do(t, "POST", path, formType, c.body, c.user, "HX-Request", "true")
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.says) {
				t.Errorf("%d %s; want %d with %q", rec.Code, rec.Body, c.status, c.says)
			}
		})
	}
	if cs := comments(); len(cs) != 2 {
		t.Errorf("%d comments after refusals, want 2", len(cs))
	}
	if q := f.queued(t); len(q) != queued {
		t.Errorf("%d requests after refusals, want %d", len(q), queued)
	}
}

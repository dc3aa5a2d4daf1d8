package github_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	ghp "github.com/atollhq/atoll/vcs/github"
)

func TestMarker(t *testing.T) {
	if got := ghp.Marker("plan"); got != "<!-- atoll:plan -->" || got != vcs.Marker("plan") {
		t.Errorf("Marker(plan) = %q", got)
	}
}

func TestCreateAndUpdateComment(t *testing.T) {
	f := newFake(t)
	p := f.provider(t)
	ctx := context.Background()
	body := "Ran Plan for dir: `.`\n" + ghp.Marker("plan")
	id, err := p.CreateComment(ctx, helloWorld, pullNum, body)
	if err != nil {
		t.Fatal(err)
	}
	if id != "1001" {
		t.Errorf("id = %q, want 1001", id)
	}
	calls := f.callsTo("POST", "/repos/octocat/Hello-World/issues/1347/comments")
	if len(calls) != 1 {
		t.Fatalf("create calls = %d", len(calls))
	}
	var sent struct{ Body string }
	json.Unmarshal(calls[0].Body, &sent)
	if sent.Body != body || calls[0].Auth != "Bearer ghp_secrettoken" {
		t.Errorf("sent %s with auth %q", calls[0].Body, calls[0].Auth)
	}

	if err := p.UpdateComment(ctx, helloWorld, pullNum, id, "updated <&>"); err != nil {
		t.Fatal(err)
	}
	calls = f.callsTo("PATCH", "/repos/octocat/Hello-World/issues/comments/1001")
	if len(calls) != 1 {
		t.Fatalf("update calls = %d", len(calls))
	}
	json.Unmarshal(calls[0].Body, &sent)
	if sent.Body != "updated <&>" || f.Comments(fullName, pullNum)[0].Body != "updated <&>" {
		t.Errorf("update sent %s", calls[0].Body)
	}

	for _, bad := range []string{"", "abc", "12x", "99999999999999999999"} {
		if err := p.UpdateComment(ctx, helloWorld, pullNum, bad, "x"); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("UpdateComment(id %q): err = %v; want EINVALID", bad, err)
		}
	}
}

// GitHub rejects bodies over 65536 characters; the comment is cut, but
// keeps its marker so it can still be hidden.
func TestCreateCommentTruncatesLongBodies(t *testing.T) {
	f := newFake(t)
	body := "```diff\n" + strings.Repeat("+ résource \"x\" {}\n", 5000) + "```\n" + ghp.Marker("plan")
	if _, err := f.provider(t).CreateComment(context.Background(), helloWorld, pullNum, body); err != nil {
		t.Fatal(err)
	}
	var sent struct{ Body string }
	json.Unmarshal(f.callsTo("POST", "/repos/octocat/Hello-World/issues/1347/comments")[0].Body, &sent)
	if n := utf8.RuneCountInString(sent.Body); n > 65536 {
		t.Errorf("sent %d characters", n)
	}
	if !strings.HasSuffix(sent.Body, ghp.Marker("plan")) || !strings.Contains(sent.Body, "truncated") || !utf8.ValidString(sent.Body) {
		t.Errorf("truncated body ends %q", sent.Body[len(sent.Body)-200:])
	}
}

func TestHideCommentsOnlyOwnMarked(t *testing.T) {
	f := newFake(t)
	// Filler first, so that some marked comments are on the second page.
	for range 110 {
		f.newComment("someone", "looks good")
	}
	ownPlan1 := f.newComment("atoll-bot", "Ran Plan\n"+ghp.Marker("plan"))
	f.newComment("atoll-bot", "Ran Apply\n"+ghp.Marker("apply"))
	f.newComment("mallory", "quoting the bot: "+ghp.Marker("plan"))   // not ours
	f.newComment("atoll-bot", "Locks released, no marker")            // ours, unmarked
	f.newComment("atoll-bot", "<!-- atoll:plan_extra -->")            // another command
	ownPlan2 := f.newComment("Atoll-Bot", ghp.Marker("plan")+"\nRan") // logins are case-insensitive

	if err := f.provider(t).HideComments(context.Background(), helloWorld, pullNum, "plan"); err != nil {
		t.Fatal(err)
	}
	lists := f.callsTo("GET", "/repos/octocat/Hello-World/issues/1347/comments")
	if len(lists) != 2 {
		t.Errorf("comment list calls = %d, want 2 pages", len(lists))
	}
	var ids []string
	for _, c := range f.callsTo("POST", "/graphql") {
		var req struct {
			Query     string
			Variables map[string]string
		}
		if err := json.Unmarshal(c.Body, &req); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(req.Query, "minimizeComment") || !strings.Contains(req.Query, "classifier: OUTDATED") || !strings.Contains(req.Query, "subjectId: $id") {
			t.Errorf("query = %s", req.Query)
		}
		if c.Auth != "Bearer ghp_secrettoken" {
			t.Errorf("graphql Authorization = %q", c.Auth)
		}
		ids = append(ids, req.Variables["id"])
	}
	want := []string{ownPlan1["node_id"].(string), ownPlan2["node_id"].(string)}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("minimized %v, want %v", ids, want)
	}
}

func TestHideCommentsWithoutUserLooksUpTokenOwner(t *testing.T) {
	f := newFake(t)
	own := f.newComment("atoll-bot", ghp.Marker("apply"))
	p, err := ghp.New(ghp.Config{APIURL: f.URL, Token: "ghp_secrettoken"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.HideComments(context.Background(), helloWorld, pullNum, "apply"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.callsTo("GET", "/user")); n != 1 {
		t.Errorf("GET /user calls = %d, want 1 (cached)", n)
	}
	calls := f.callsTo("POST", "/graphql")
	if len(calls) != 2 || !strings.Contains(string(calls[0].Body), own["node_id"].(string)) {
		t.Errorf("graphql calls = %d", len(calls))
	}
}

func TestHideCommentsGraphQLErrors(t *testing.T) {
	f := newFake(t)
	gone := f.newComment("atoll-bot", ghp.Marker("plan"))
	kept := f.newComment("atoll-bot", ghp.Marker("plan"))
	p := f.provider(t)

	// A comment deleted since it was listed is skipped.
	f.answerGraphQL(func(w http.ResponseWriter, id string) {
		if id == gone["node_id"] {
			writeJSON(w, 200, map[string]any{"data": map[string]any{"minimizeComment": nil}, "errors": []map[string]any{{"type": "NOT_FOUND", "path": []string{"minimizeComment"}, "message": "Could not resolve to a node with the global id of '" + id + "'"}}})
			return
		}
		writeJSON(w, 200, map[string]any{"data": map[string]any{"minimizeComment": map[string]any{"minimizedComment": map[string]any{"isMinimized": true}}}})
	})
	if err := p.HideComments(context.Background(), helloWorld, pullNum, "plan"); err != nil {
		t.Fatalf("NOT_FOUND should be skipped: %v", err)
	}
	if n := len(f.callsTo("POST", "/graphql")); n != 2 {
		t.Errorf("graphql calls = %d, want 2", n)
	}

	// Other GraphQL errors come with 200 too and must not pass silently.
	f.answerGraphQL(func(w http.ResponseWriter, id string) {
		writeJSON(w, 200, map[string]any{"errors": []map[string]any{{"type": "FORBIDDEN", "message": "Resource not accessible by integration"}}})
	})
	err := p.HideComments(context.Background(), helloWorld, pullNum, "plan")
	if err == nil || !strings.Contains(err.Error(), "Resource not accessible by integration") || !strings.Contains(err.Error(), kept["node_id"].(string)) && !strings.Contains(err.Error(), gone["node_id"].(string)) {
		t.Errorf("err = %v", err)
	}

	// And HTTP-level failures.
	f.answerGraphQL(func(w http.ResponseWriter, id string) {
		writeJSON(w, 502, map[string]any{"message": "Server Error"})
	})
	if err := p.HideComments(context.Background(), helloWorld, pullNum, "plan"); err == nil {
		t.Error("502 from GraphQL: no error")
	}
}

package azuredevops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

func TestCreateComment(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	id, err := p.CreateComment(context.Background(), repo, 7, "plan output\n"+vcs.Marker("plan"))
	if err != nil {
		t.Fatal(err)
	}
	threads := srv.Threads(org, project, repoName, 7)
	if len(threads) != 1 {
		t.Fatalf("threads = %+v, want 1", threads)
	}
	th := threads[0]
	if want := itoa(th.ID) + "/1"; id != want {
		t.Errorf("id = %q, want %q", id, want)
	}
	if th.Status != "active" || len(th.Comments) != 1 {
		t.Fatalf("thread = %+v; want one active comment", th)
	}
	c := th.Comments[0]
	if c.Content != "plan output\n"+vcs.Marker("plan") || c.CommentType != "text" || c.Author != bot || c.ParentID != 0 {
		t.Errorf("comment = %+v", c)
	}
	// Comments go through vcs.Comment as replies when there is a replyTo.
	if _, ok := vcs.Provider(p).(vcs.Replier); !ok {
		t.Error("Provider is not a vcs.Replier")
	}
}

func TestReplyComment(t *testing.T) {
	srv := newFake(t)
	asked := srv.AddThread(org, project, repoName, 7, azuretest.Thread{Comments: []azuretest.Comment{
		{Author: author, Content: "atlantis plan"}, {Author: "bob@contoso.com", Content: "+1", ParentID: 1},
	}})
	p := newProvider(t, srv)
	id, err := vcs.Comment(context.Background(), p, repo, 7, itoa(asked)+"/2", "result")
	if err != nil {
		t.Fatal(err)
	}
	if want := itoa(asked) + "/3"; id != want {
		t.Errorf("id = %q, want %q", id, want)
	}
	threads := srv.Threads(org, project, repoName, 7)
	if len(threads) != 1 {
		t.Fatalf("a new thread was started: %+v", threads)
	}
	c := threads[0].Comments[2]
	if c.Content != "result" || c.ParentID != 2 || c.Author != bot {
		t.Errorf("reply = %+v; want result by the bot, parent 2", c)
	}
	// The id works for an update.
	if err := p.UpdateComment(context.Background(), repo, 7, id, "result v2"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Threads(org, project, repoName, 7)[0].Comments[2].Content; got != "result v2" {
		t.Errorf("updated content = %q", got)
	}
}

// A replyTo that is not THREADID/COMMENTID starts a new thread rather than
// failing the command's output.
func TestReplyCommentMalformedStartsThread(t *testing.T) {
	for _, replyTo := range []string{"12", "abc/1", "1/", "/1", "0/1", "1/0", "-1/2", "1/2/3"} {
		t.Run(replyTo, func(t *testing.T) {
			srv := newFake(t)
			id, err := newProvider(t, srv).ReplyComment(context.Background(), repo, 7, replyTo, "result")
			if err != nil {
				t.Fatal(err)
			}
			threads := srv.Threads(org, project, repoName, 7)
			if len(threads) != 1 || threads[0].Comments[0].Content != "result" || id != itoa(threads[0].ID)+"/1" {
				t.Errorf("threads = %+v, id %q; want one new thread", threads, id)
			}
		})
	}
}

func TestReplyCommentUnknownThread(t *testing.T) {
	srv := newFake(t)
	_, err := newProvider(t, srv).ReplyComment(context.Background(), repo, 7, "999/1", "result")
	if atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("err = %v; want ENOTFOUND", err)
	}
}

func TestUpdateCommentErrors(t *testing.T) {
	srv := newFake(t)
	others := srv.AddThread(org, project, repoName, 7, azuretest.Thread{Comments: []azuretest.Comment{{Author: author, Content: "mine"}}})
	p := newProvider(t, srv)
	cases := []struct {
		id   string
		code string
	}{
		{"42", atoll.EINVALID},
		{"x/y", atoll.EINVALID},
		{itoa(others) + "/1", atoll.EFORBIDDEN}, // only the author may edit
		{itoa(others) + "/9", atoll.ENOTFOUND},
		{"999/1", atoll.ENOTFOUND},
	}
	for _, tc := range cases {
		err := p.UpdateComment(context.Background(), repo, 7, tc.id, "x")
		if atoll.ErrorCode(err) != tc.code {
			t.Errorf("UpdateComment(%q) err = %v; want %s", tc.id, err, tc.code)
		}
	}
	if got := srv.Threads(org, project, repoName, 7)[0].Comments[0].Content; got != "mine" {
		t.Errorf("someone else's comment became %q", got)
	}
}

func TestHideComments(t *testing.T) {
	srv := newFake(t)
	add := func(status, who, content string) int {
		return srv.AddThread(org, project, repoName, 7, azuretest.Thread{Status: status, Comments: []azuretest.Comment{{Author: who, Content: content}}})
	}
	plan, apply := vcs.Marker("plan"), vcs.Marker("apply")
	oldPlan := add("active", bot, "old plan\n"+plan)
	olderPlan := add("pending", bot, "older plan\n"+plan)
	resolved := add("fixed", bot, "resolved plan\n"+plan)
	closed := add("closed", bot, "closed plan\n"+plan)
	applyTh := add("active", bot, "apply\n"+apply)
	quoted := add("active", author, "look: "+plan)
	human := add("active", author, "atlantis plan")
	// A user's thread where Atoll answered with a plan: superseded too.
	answered := srv.AddThread(org, project, repoName, 7, azuretest.Thread{Comments: []azuretest.Comment{
		{Author: author, Content: "atlantis plan"}, {Author: bot, Content: "plan\n" + plan, ParentID: 1},
	}})
	newPlan := add("active", bot, "new plan\n"+plan)

	p := newProvider(t, srv)
	if err := p.HideComments(context.Background(), repo, 7, "plan", itoa(newPlan)+"/1"); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		oldPlan: "closed", olderPlan: "closed", answered: "closed",
		resolved: "fixed", closed: "closed", applyTh: "active", quoted: "active", human: "active", newPlan: "active",
	}
	for _, th := range srv.Threads(org, project, repoName, 7) {
		if th.Status != want[th.ID] {
			t.Errorf("thread %d (%q) status = %q, want %q", th.ID, th.Comments[0].Content, th.Status, want[th.ID])
		}
		if len(th.Comments) == 0 || th.Deleted {
			t.Errorf("thread %d lost its comments", th.ID)
		}
	}
	// Only the threads that change are written.
	var patches int
	for _, c := range srv.Calls() {
		if c.Method == "PATCH" {
			patches++
		}
	}
	if patches != 3 {
		t.Errorf("PATCH calls = %d, want 3", patches)
	}
}

// Without Config.User the marker alone tells Atoll's comments apart.
func TestHideCommentsWithoutUser(t *testing.T) {
	srv := newFake(t)
	quoted := srv.AddThread(org, project, repoName, 7, azuretest.Thread{Comments: []azuretest.Comment{{Author: "svc", Content: vcs.Marker("plan")}}})
	p := newProvider(t, srv, func(c *azuredevops.Config) { c.User = "" })
	if err := p.HideComments(context.Background(), repo, 7, "plan"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Threads(org, project, repoName, 7)[0]; got.ID != quoted || got.Status != "closed" {
		t.Errorf("thread = %+v; want closed", got)
	}
}

func TestCommentTruncated(t *testing.T) {
	srv := newFake(t)
	body := strings.Repeat("é", 200000) + vcs.Marker("plan")
	if _, err := newProvider(t, srv).CreateComment(context.Background(), repo, 7, body); err != nil {
		t.Fatal(err)
	}
	got := srv.Threads(org, project, repoName, 7)[0].Comments[0].Content
	if n := len([]rune(got)); n > 150000 || !strings.HasSuffix(got, vcs.Marker("plan")) || !strings.Contains(got, "truncated") {
		t.Errorf("content: %d runes, tail %q", n, got[len(got)-80:])
	}
}

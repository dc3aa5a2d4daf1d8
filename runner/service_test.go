package runner_test

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
)

// A submitted command is written once, by the comment grammar with the
// server's executable name, and that text is the request's comment (what
// the audit log and the replies show), queued as the submitting user.
func TestSubmitWritesTheCommentOnce(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t)
	r.Parser = command.Parser{ExecutableName: "terrabot"}
	repo := atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra"}
	done, err := r.Submit(ctx, atoll.CommandSubmission{Repo: repo, Pull: atoll.Pull{Number: 4},
		Command: atoll.Command{Name: "apply", Project: "o'brien"}, User: "alice", Via: atoll.ViaAPI, Source: "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `terrabot apply -p 'o'\''brien'`; done.Comment != want || done.RequestID == 0 || done.CommentID != 0 {
		t.Fatalf("Submit = %+v; want request of %q and no conversation comment", done, want)
	}
	q, err := r.DB.Request(ctx, done.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	if q.Comment != done.Comment || q.User != "alice" || q.Source != "192.0.2.1" || q.Kind != atoll.RequestComment {
		t.Fatalf("request = %+v; want alice's comment %q from 192.0.2.1", q, done.Comment)
	}
}

// Submit and Check hold a built command to the rules of a typed one, and
// a refused command queues nothing.
func TestSubmitRefusesWhatACommentCouldNotSay(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t)
	r.Parser = command.Parser{AllowCommands: []string{command.Plan}}
	repo := atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra"}
	for _, cmd := range []atoll.Command{
		{Name: "plan", Project: "has space"}, // no project name has spaces
		{Name: "apply"},                      // not in --allow-commands
		{Name: "plan", Dir: "../outside"},    // out of the checkout
		{Name: "plan", Project: "p", Dir: "d"},
	} {
		if err := r.Check(cmd); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("Check(%+v) = %v, want EINVALID", cmd, err)
		}
		done, err := r.Submit(ctx, atoll.CommandSubmission{Repo: repo, Pull: atoll.Pull{Number: 4}, Command: cmd, User: "alice", Via: atoll.ViaAPI})
		if atoll.ErrorCode(err) != atoll.EINVALID || done.RequestID != 0 {
			t.Errorf("Submit(%+v) = %+v, %v; want EINVALID", cmd, done, err)
		}
	}
	if n, err := r.DB.CountRequests(ctx, atoll.RequestQueued); err != nil || n != 0 {
		t.Fatalf("%d requests queued by refused commands (%v)", n, err)
	}
	// The grammar's cleaning of a directory is no refusal.
	if err := r.Check(atoll.Command{Name: "plan", Dir: "./a/b/"}); err != nil {
		t.Errorf("Check of an uncleaned dir = %v", err)
	}
}

// On a local repository the dashboard's command is also its user's
// comment in the conversation (the page is the conversation); the API's
// is not, as before the commands were structured.
func TestSubmitLocalConversation(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t)
	r.Allowlist = runner.ParseAllowlist("local/acme/*")
	db := r.DB.(*store.DB)
	repo := atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "acme", Name: "infra"}
	var pullID int64
	err := db.Update(ctx, func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(repo)
		if err != nil {
			return err
		}
		pullID, err = tx.UpsertPull(repoID, atoll.Pull{Number: 1, State: atoll.PullOpen})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pull := atoll.Pull{ID: pullID, Number: 1}
	api, err := r.Submit(ctx, atoll.CommandSubmission{Repo: repo, Pull: pull, Command: atoll.Command{Name: "plan"}, User: "bob", Via: atoll.ViaAPI})
	if err != nil || api.CommentID != 0 {
		t.Fatalf("API Submit = %+v, %v; want no conversation comment", api, err)
	}
	dash, err := r.Submit(ctx, atoll.CommandSubmission{Repo: repo, Pull: pull, Command: atoll.Command{Name: "plan", Dir: "app", Workspace: "default"},
		User: "alice", Via: atoll.ViaDashboard})
	if err != nil || dash.CommentID == 0 || dash.RequestID == 0 {
		t.Fatalf("dashboard Submit = %+v, %v; want a conversation comment and a request", dash, err)
	}
	cs, err := db.Comments(ctx, pullID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Author != "alice" || cs[0].Body != "atlantis plan -d app -w default" {
		t.Fatalf("conversation = %+v; want alice's one comment", cs)
	}
}

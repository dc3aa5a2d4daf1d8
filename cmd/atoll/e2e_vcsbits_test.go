package main_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/runner"
)

// commentID is the id of the comment in the issue_comment fixture, which
// every test comment webhook carries.
const commentID = "396926483"

// newE2EExtras is newE2EWith with the GitHub API served through ghExtras
// (reactions, branch deletion, teams).
func newE2EExtras(t *testing.T, files map[string]string, configure func(*main.Config)) (*e2e, *ghExtras) {
	testEnv(t)
	e := &e2e{t: t, gh: newFakeGitHub(t), dataDir: t.TempDir()}
	x := newGHExtras(t, e.gh)
	e.repo = newGitRepo(t, files)
	e.base = e.repo.git("rev-parse", "main")
	e.cloneURL, _ = serveGit(t, e.repo, "gh-test-token")
	e.m = startMain(t, e.dataDir, func(c *main.Config) {
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, x.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		if configure != nil {
			configure(c)
		}
	})
	t.Cleanup(func() { e.m.Close() })
	return e, x
}

// commentAs posts a comment webhook from login.
func (e *e2e) commentAs(login string, number int, body string) {
	e.t.Helper()
	edit := commentEvent(e.cloneURL, number, body)
	resp := webhook(e.t, e.m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, func(p map[string]any) {
		edit(p)
		p["comment"].(map[string]any)["user"].(map[string]any)["login"] = login
		p["sender"].(map[string]any)["login"] = login
	})
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("comment webhook: status %d", resp.StatusCode)
	}
}

// --emoji-reaction: the command comment gets the reaction, once; a
// reaction GitHub refuses is only logged, the command still runs.
func TestEmojiReactionOnPlanComment(t *testing.T) {
	e, x := newE2EExtras(t, map[string]string{"staging/main.tf": tfProject("staging", 1)},
		func(c *main.Config) { c.EmojiReaction = "eyes" })
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	if got := x.reactionsOn(commentID); len(got) != 0 {
		t.Fatalf("reactions before any comment: %v", got)
	}

	e.comment(1, "atlantis plan -d staging")
	mustContain(t, "plan comment", e.waitComment(1, 2), "Plan: 2 to add")
	if got := x.reactionsOn(commentID); !slices.Equal(got, []string{"eyes"}) {
		t.Fatalf("reactions on the plan comment = %v; want [eyes]", got)
	}

	// Refused by GitHub (the token may not react): the plan still runs.
	x.RefuseReactions(true)
	e.comment(1, "atlantis plan -d staging")
	mustContain(t, "plan with the reaction refused", e.waitComment(1, 3), "Plan: 2 to add")
	if n := e.gh.callCount("POST /repos/acme/infra/issues/comments/" + commentID + "/reactions"); n != 2 {
		t.Fatalf("reaction requests = %d; want 2 (one accepted, one refused)", n)
	}
}

// delete_source_branch_on_merge: automerge deletes the head branch of the
// pull request whose atlantis.yaml asks for it, and only that one.
func TestAutomergeDeleteSourceBranch(t *testing.T) {
	const cfg = "version: 3\nautomerge: true\nprojects:\n- dir: a\n- dir: b\n"
	e, x := newE2EExtras(t, map[string]string{"atlantis.yaml": cfg, "a/main.tf": tfProject("a", 1), "b/main.tf": tfProject("b", 1)}, nil)
	x.SetBranch(fakeRepo, "scale-a", true)
	x.SetBranch(fakeRepo, "scale-b", true)

	e.open(1, "scale-a", map[string]string{"a/main.tf": tfProject("a", 2),
		"atlantis.yaml": "delete_source_branch_on_merge: true\n" + cfg}, "a/main.tf", "atlantis.yaml")
	mustContain(t, "plan of #1", e.waitComment(1, 1), "Plan: 2 to add")
	e.comment(1, "atlantis apply")
	mustContain(t, "apply of #1", e.waitComment(1, 2), "Apply complete!")
	merged := e.waitComment(1, 3)
	mustContain(t, "automerge of #1", merged, "Automatically merged")
	if strings.Contains(merged, "could not be deleted") {
		t.Fatalf("automerge comment: %s", merged)
	}
	if got := x.deletedBranches(); !slices.Equal(got, []string{"scale-a"}) {
		t.Fatalf("deleted branches = %v; want [scale-a]", got)
	}

	// Without the key (pull request 2's atlantis.yaml is the base's), the
	// branch stays.
	e.open(2, "scale-b", map[string]string{"b/main.tf": tfProject("b", 2)}, "b/main.tf")
	mustContain(t, "plan of #2", e.waitComment(2, 1), "Plan: 2 to add")
	e.comment(2, "atlantis apply")
	mustContain(t, "apply of #2", e.waitComment(2, 2), "Apply complete!")
	mustContain(t, "automerge of #2", e.waitComment(2, 3), "Automatically merged")
	if m := e.gh.mergesOf(2); len(m) != 1 {
		t.Fatalf("merges of #2 = %+v", m)
	}
	if got := x.deletedBranches(); !slices.Equal(got, []string{"scale-a"}) {
		t.Fatalf("deleted branches = %v; scale-b was kept without delete_source_branch_on_merge", got)
	}
}

// --gh-team-allowlist: members of infra (here through its child team
// devs) may plan, only ops may apply; someone in neither is refused plan
// with a comment, and their pull request is not autoplanned.
func TestGHTeamAllowlist(t *testing.T) {
	e, x := newE2EExtras(t, map[string]string{"staging/main.tf": tfProject("staging", 1)}, func(c *main.Config) {
		var err error
		if c.GHTeamAllowlist, err = runner.ParseTeamAllowlist("infra:plan, ops:*"); err != nil {
			t.Fatal(err)
		}
	})
	x.setTeam("infra", "")
	x.setTeam("devs", "infra", "alice")
	x.setTeam("ops", "", "carol")

	// alice (devs, a child of infra) opens: autoplanned.
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan by alice", e.waitComment(1, 1), "Plan: 2 to add")

	e.commentAs("alice", 1, "atlantis apply")
	refused := e.waitComment(1, 2)
	mustContain(t, "alice's apply", refused, "@alice is not allowed to run `apply`", "`ops`", "Nothing was run")
	if strings.Contains(refused, "Apply complete!") {
		t.Fatalf("alice applied:\n%s", refused)
	}

	e.commentAs("bob", 1, "atlantis plan")
	mustContain(t, "bob's plan", e.waitComment(1, 3), "@bob is not allowed to run `plan`", "`infra`", "`ops`")

	e.commentAs("carol", 1, "atlantis apply")
	mustContain(t, "carol's apply", e.waitComment(1, 4), "Apply complete!")

	// bob's own pull request is not autoplanned (as in Atlantis, silently);
	// help needs no team.
	sha := e.repo.branch("bob-change", map[string]string{"staging/main.tf": tfProject("staging", 3)})
	e.gh.setPull(2, fakePull{HeadSHA: sha, HeadRef: "bob-change", BaseSHA: e.base, BaseRef: "main", Files: []string{"staging/main.tf"}})
	edit := pullEvent(e.cloneURL, 2, "opened", "bob-change", sha, e.base)
	resp := webhook(t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, func(p map[string]any) {
		edit(p)
		p["pull_request"].(map[string]any)["user"].(map[string]any)["login"] = "bob"
		p["sender"].(map[string]any)["login"] = "bob"
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("opened webhook: status %d", resp.StatusCode)
	}
	e.commentAs("bob", 2, "atlantis help")
	if got := e.waitComment(2, 1); strings.Contains(got, "Plan:") || !strings.Contains(got, "Usage") {
		t.Fatalf("first comment on bob's pull request is not the help reply:\n%s", got)
	}
}

// The flags take Atlantis's syntax and refuse what GitHub or the list
// would not understand, at start.
func TestGitHubExtrasFlags(t *testing.T) {
	base := []string{"--repo-allowlist", "github.com/acme/*"}
	var c main.Config
	if err := c.Parse(append(base, "--emoji-reaction", "rocket", "--gh-team-allowlist", "dev:plan,ops:apply,devops:*"), envOf(nil)); err != nil {
		t.Fatal(err)
	}
	want := runner.TeamAllowlist{{Team: "dev", Command: "plan"}, {Team: "ops", Command: "apply"}, {Team: "devops", Command: "*"}}
	if c.EmojiReaction != "rocket" || !slices.Equal(c.GHTeamAllowlist, want) {
		t.Fatalf("parsed %q %v", c.EmojiReaction, c.GHTeamAllowlist)
	}
	var env main.Config
	if err := env.Parse(base, envOf(map[string]string{"ATOLL_EMOJI_REACTION": "eyes", "ATOLL_GH_TEAM_ALLOWLIST": "*:plan"})); err != nil {
		t.Fatal(err)
	}
	if env.EmojiReaction != "eyes" || len(env.GHTeamAllowlist) != 1 {
		t.Fatalf("from the environment: %q %v", env.EmojiReaction, env.GHTeamAllowlist)
	}
	for _, bad := range [][]string{
		{"--emoji-reaction", "thumbsup"},
		{"--gh-team-allowlist", "dev"},
		{"--gh-team-allowlist", "dev:deploy"},
		{"--gh-team-allowlist", "dev:plan:apply"},
	} {
		var c main.Config
		if err := c.Parse(append(append([]string{}, base...), bad...), envOf(nil)); err == nil {
			t.Errorf("Parse(%v) accepted", bad)
		}
	}
}

// The server-side repo config's delete_source_branch_on_merge applies to a
// repository whose atlantis.yaml says nothing about it.
func TestAutomergeDeleteSourceBranchFromServerConfig(t *testing.T) {
	e, x := newE2EExtras(t, map[string]string{"atlantis.yaml": "version: 3\nautomerge: true\nprojects:\n- dir: a\n- dir: b\n",
		"a/main.tf": tfProject("a", 1), "b/main.tf": tfProject("b", 1)},
		func(c *main.Config) {
			c.RepoConfigJSON = `{"repos": [{"id": "github.com/acme/infra", "delete_source_branch_on_merge": true}]}`
		})
	x.SetBranch(fakeRepo, "scale-a", true)
	e.open(1, "scale-a", map[string]string{"a/main.tf": tfProject("a", 2)}, "a/main.tf")
	mustContain(t, "plan", e.waitComment(1, 1), "Plan: 2 to add")
	e.comment(1, "atlantis apply")
	mustContain(t, "apply", e.waitComment(1, 2), "Apply complete!")
	mustContain(t, "automerge", e.waitComment(1, 3), "Automatically merged")
	if got := x.deletedBranches(); !slices.Equal(got, []string{"scale-a"}) {
		t.Fatalf("deleted branches = %v; want [scale-a]", got)
	}

	// A branch GitHub refuses to delete: merged all the same, and told.
	x.SetBranch(fakeRepo, "keep-me", true)
	x.ProtectBranch(fakeRepo, "keep-me")
	e.open(2, "keep-me", map[string]string{"b/main.tf": tfProject("b", 3)}, "b/main.tf")
	mustContain(t, "plan of #2", e.waitComment(2, 1), "Plan: 3 to add")
	e.comment(2, "atlantis apply")
	mustContain(t, "apply of #2", e.waitComment(2, 2), "Apply complete!")
	mustContain(t, "automerge of #2", e.waitComment(2, 3), "Automatically merged", "`keep-me` could not be deleted", "Cannot delete this protected branch")
	if m := e.gh.mergesOf(2); len(m) != 1 {
		t.Fatalf("merges of #2 = %+v", m)
	}
}

// A cancel comment acts at intake: the team allowlist is checked there
// too, so someone it refuses interrupts nothing (the request waits its
// turn, where it would be refused), while a member of an allowed team
// interrupts the plan.
func TestGHTeamAllowlistCancel(t *testing.T) {
	slowURL, hit := hangingModuleServer(t)

	e, x := newE2EExtras(t, map[string]string{"staging/main.tf": tfProject("staging", 1)}, func(c *main.Config) {
		c.AllowCommands = []string{"plan", "apply", "cancel", "unlock"}
		var err error
		if c.GHTeamAllowlist, err = runner.ParseTeamAllowlist("*:plan,ops:cancel"); err != nil {
			t.Fatal(err)
		}
	})
	x.setTeam("ops", "", "carol")
	openStuckPlan(t, e, slowURL, hit)
	e.commentAs("bob", 1, "atlantis cancel")
	e.commentAs("carol", 1, "atlantis cancel")
	mustContain(t, "plan comment", e.waitComment(1, 1), "Canceled by a cancel comment")
	// bob's cancel interrupted nothing: it was still queued, behind the
	// plan, when carol's canceled both.
	mustContain(t, "carol's cancel", e.waitComment(1, 2), "Interrupted the running plan", "autoplan by alice", "` atlantis cancel ` by bob")
}

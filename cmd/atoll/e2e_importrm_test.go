package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// importApp is a project whose state lives at state (outside the pooled
// checkouts, so the test reads it) with terraform_data resources, which
// Terraform 1.5.7 can import with no provider to download.
func importApp(state string, names ...string) string {
	s := fmt.Sprintf("terraform {\n  backend \"local\" {\n    path = %q\n  }\n}\n", state)
	for _, n := range names {
		s += fmt.Sprintf("\nresource \"terraform_data\" %q {\n  input = %q\n}\n", n, n)
	}
	return s
}

// stateResources lists the terraform_data resources of a state file with
// their ids.
func stateResources(t *testing.T, state string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatalf("read state: %v", err)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Attributes struct {
					ID string `json:"id"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("parse state: %v", err)
	}
	out := map[string]string{}
	for _, r := range st.Resources {
		for _, in := range r.Instances {
			out[r.Type+"."+r.Name] = in.Attributes.ID
		}
	}
	return out
}

type importRmE2E struct {
	*e2e
	pull, n int
}

func (e *importRmE2E) reply(comment string) string {
	e.t.Helper()
	e.comment(e.pull, comment)
	e.n++
	got := e.waitComment(e.pull, e.n)
	e.t.Logf("%s ->\n%s", comment, got)
	return got
}

// state rm and import end to end, with the real Terraform: a state rm
// removes an applied resource, an import brings one in (both selecting the
// project with a -d glob), each discards the project's unapplied plan (an
// apply then finds none), import_requirements refuse an import until the
// pull request is approved, a target outside the repository is refused,
// and neither command sets a commit status, as in Atlantis.
func TestImportRmEndToEnd(t *testing.T) {
	state := filepath.Join(t.TempDir(), "app.tfstate")
	e := &importRmE2E{e2e: newE2EWith(t, map[string]string{"app/main.tf": importApp(state)}, func(c *main.Config) {
		c.AllowCommands = []string{"plan", "apply", "import", "state"}
		c.RepoConfigJSON = `{"repos": [{"id": "/.*/", "import_requirements": ["approved"]}]}`
	}), pull: 1}
	sha := e.open(1, "grow", map[string]string{"app/main.tf": importApp(state, "x", "y")}, "app/main.tf")
	e.n = 1
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	mustContain(t, "apply", e.reply("atlantis apply"), "Apply complete! Resources: 2 added")
	if got := stateResources(t, state); len(got) != 2 {
		t.Fatalf("state after apply = %v", got)
	}

	// A -d glob selects the project for state rm and import too, as in Atlantis.
	rm := e.reply("atlantis state rm -d 'ap*' terraform_data.x")
	mustContain(t, "state rm", rm, "Ran State `rm` for dir: `app` workspace: `default`", "Removed terraform_data.x",
		"**State rm successful.**", "plan again before applying", "`atlantis plan -d app`")
	if got := stateResources(t, state); len(got) != 1 || got["terraform_data.y"] == "" {
		t.Fatalf("state after state rm = %v, want only terraform_data.y", got)
	}

	// A plan now creates x again; the import below discards it.
	mustContain(t, "plan after rm", e.reply("atlantis plan -d app"), "Plan: 1 to add")

	refused := e.reply("atlantis import -d app terraform_data.x imported-id")
	mustContain(t, "import unapproved", refused, "**Import Error**", "Cannot import: the pull request must be approved")
	if _, ok := stateResources(t, state)["terraform_data.x"]; ok {
		t.Fatal("imported although import_requirements were not met")
	}

	e.gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "grow", BaseSHA: e.base, BaseRef: "main", Files: []string{"app/main.tf"}, Approved: true})
	imported := e.reply("atlantis import -d 'a*' terraform_data.x imported-id")
	mustContain(t, "import", imported, "Ran Import for dir: `app` workspace: `default`", `Importing from ID "imported-id"`,
		"**Import successful.**", "unapplied plan was discarded")
	if got := stateResources(t, state)["terraform_data.x"]; got != "imported-id" {
		t.Fatalf("terraform_data.x id in state = %q, want imported-id", got)
	}
	mustContain(t, "apply after import", e.reply("atlantis apply"), "Ran Apply for 0 projects", "no unapplied plans")

	bad := e.reply("atlantis import -d ../x terraform_data.x id")
	mustContain(t, "bad dir", bad, "-d/--dir")
	if strings.Contains(bad, "Ran Import") {
		t.Fatalf("import ran outside the repository:\n%s", bad)
	}

	for _, s := range e.gh.Statuses(fakeRepo, "") {
		if strings.Contains(s.Context, "import") || strings.Contains(s.Context, "state") {
			t.Errorf("commit status %q set; Atlantis sets none for import and state rm", s.Context)
		}
	}

	var jobs []struct{ Kind, State string }
	getJSON(t, e.m.URL+"/api/v1/jobs?pull=1", &jobs)
	var kinds []string
	for _, j := range jobs {
		kinds = append(kinds, j.Kind+":"+j.State)
	}
	for _, want := range []string{"state_rm:succeeded", "import:succeeded", "import:failed"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("jobs %v lack %s", kinds, want)
		}
	}
}

// Custom import and state_rm stages run their steps in order, run steps
// with the comment's arguments in COMMENT_ARGS only; a second pull request
// cannot import into a project the first one holds locked.
func TestImportRmCustomWorkflow(t *testing.T) {
	state := filepath.Join(t.TempDir(), "app.tfstate")
	cfg := `version: 3
projects:
- dir: app
  workflow: custom
workflows:
  custom:
    import:
      steps:
      - run: printf "%s\\n" "before import $COMMENT_ARGS"
      - import:
          extra_args: ["-lock-timeout=10s"]
    state_rm:
      steps:
      - init
      - run: echo "before state rm"
      - state_rm
`
	e := &importRmE2E{e2e: newE2EWith(t, map[string]string{"atlantis.yaml": cfg, "app/main.tf": importApp(state)}, func(c *main.Config) {
		c.AllowCommands = []string{"plan", "apply", "import", "state"}
		allowRepoSettings(c)
	}), pull: 1}
	e.open(1, "grow", map[string]string{"app/main.tf": importApp(state, "x")}, "app/main.tf")
	e.n = 1
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 1 to add")

	imported := e.reply("atlantis import -d app terraform_data.x abc -- -lock-timeout=5s")
	mustContain(t, "custom import", imported, `before import \-\l\o\c\k`, `Importing from ID "abc"`, "**Import successful.**", "unapplied plan was discarded")
	if got := stateResources(t, state)["terraform_data.x"]; got != "abc" {
		t.Fatalf("terraform_data.x id = %q, want abc", got)
	}
	// A -d glob selects the project for state rm and import too, as in Atlantis.
	rm := e.reply("atlantis state rm -d 'ap*' terraform_data.x")
	mustContain(t, "custom state rm", rm, "before state rm", "Removed terraform_data.x", "**State rm successful.**")
	if got := stateResources(t, state); len(got) != 0 {
		t.Fatalf("state after state rm = %v", got)
	}

	// Pull request 1 holds app's lock (taken by its plan).
	e.pull, e.n = 2, 0
	e.open(2, "other", map[string]string{"app/main.tf": importApp(state, "z")}, "app/main.tf")
	e.n = 1
	e.waitComment(2, 1)
	locked := e.reply("atlantis import -d app terraform_data.z zz")
	mustContain(t, "locked import", locked, "locked by", "#1")
	if _, ok := stateResources(t, state)["terraform_data.z"]; ok {
		t.Fatal("imported into a project another pull request holds locked")
	}
}

// Import jobs are durable as plans and applies are: a stop interrupts a
// running import (told, with the warning that the state may have changed,
// and never retried) and leaves a queued one queued, which the next start
// runs.
func TestImportRmRestart(t *testing.T) {
	testEnv(t)
	gh := newFakeGitHub(t)
	states := t.TempDir()
	slowState, fastState := filepath.Join(states, "slow.tfstate"), filepath.Join(states, "fast.tfstate")
	cfg := "version: 3\nprojects:\n- dir: slow\n  workflow: slow\n- dir: fast\nworkflows:\n  slow:\n    import:\n      steps:\n      - run: sleep 60\n      - import\n"
	repo := newGitRepo(t, map[string]string{"atlantis.yaml": cfg, "slow/main.tf": importApp(slowState), "fast/main.tf": importApp(fastState)})
	base := repo.git("rev-parse", "main")
	cloneURL, _ := serveGit(t, repo, "gh-test-token")
	dataDir := t.TempDir()
	start := func() *main.Main {
		m := startMain(t, dataDir, func(c *main.Config) {
			c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, gh.URL+"/"
			c.RepoAllowlist = "github.com/acme/*"
			c.AllowCommands = []string{"plan", "apply", "import", "state"}
			c.Parallelism = 1 // the second pull request's import waits in the queue
			c.StopTimeout = 300 * time.Millisecond
			allowRepoSettings(c)
		})
		t.Cleanup(func() { m.Close() })
		return m
	}
	m := start()
	for n, dir := range map[int]string{1: "slow", 2: "fast"} {
		state := map[string]string{"slow": slowState, "fast": fastState}[dir]
		sha := repo.branch(dir, map[string]string{dir + "/main.tf": importApp(state, "x")})
		gh.setPull(n, fakePull{HeadSHA: sha, HeadRef: dir, BaseSHA: base, BaseRef: "main", Files: []string{dir + "/main.tf"}})
		webhook(t, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, n, "opened", dir, sha, base))
		mustContain(t, "autoplan of "+dir, waitFor(t, gh, n, 1), "Plan: 1 to add")
	}
	webhook(t, m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, commentEvent(cloneURL, 1, "atlantis import -d slow terraform_data.x s1"))
	eventually(t, 60*time.Second, "slow import running", func() bool {
		var jobs []atoll.Job
		getJSON(t, m.URL+"/api/v1/jobs?kind=import&state=running", &jobs)
		return len(jobs) == 1
	})
	webhook(t, m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, commentEvent(cloneURL, 2, "atlantis import -d fast terraform_data.x f1"))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "interrupted import", waitFor(t, gh, 1, 2), "Import", "nterrupted", "not retried", "import may have been partly done")
	if n := len(gh.pullComments(2)); n != 1 {
		t.Fatalf("#2 has %d comments before restart; its import should still be queued", n)
	}

	m = start()
	mustContain(t, "queued import after restart", waitFor(t, gh, 2, 2), "Ran Import for dir: `fast`", "**Import successful.**")
	if got := stateResources(t, fastState)["terraform_data.x"]; got != "f1" {
		t.Fatalf("fast state: terraform_data.x = %q, want f1", got)
	}
	var imports []atoll.Job
	getJSON(t, m.URL+"/api/v1/jobs?kind=import&pull=1", &imports)
	if len(imports) != 1 || imports[0].State != atoll.JobInterrupted {
		t.Fatalf("import jobs of #1 after restart = %+v; want the one interrupted job, not retried", imports)
	}
}

package main_test

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// lockedBuffer collects the server's log lines from its goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A project using a module from a private repository on the GitHub host
// plans and applies: terraform init clones it through Atoll's credential
// helper (the real atoll binary, run by the git Terraform runs). The token
// is written nowhere: not in the data dir (database, work dirs, their
// .git/config, Terraform's data dirs), the server's log or the comments.
func TestPrivateModuleThroughCredentialHelper(t *testing.T) {
	const token = "gh-test-token" // what the fake GitHub and its git server accept
	testEnv(t)
	gh := newFakeGitHub(t)
	repo := newGitRepo(t, map[string]string{"app/main.tf": tfProject("app", 1)})
	base := repo.git("rev-parse", "main")
	cloneURL, _ := serveGit(t, repo, token)
	// The module repository sits beside the project's, on the same
	// authenticated git server.
	newModuleRepo(t, filepath.Join(filepath.Dir(repo.Dir), "modules"), "from the private module")
	source := strings.TrimSuffix(cloneURL, "/infra") + "/modules//m?ref=v1"

	dataDir := t.TempDir()
	var logs lockedBuffer
	m := main.NewMain()
	m.Config.Addr, m.Config.DataDir, m.Config.TerraformBin = "127.0.0.1:0", dataDir, terraformBin(t)
	m.Config.Parallelism, m.Config.StopTimeout = 2, 30*time.Second
	m.Config.APISecret, m.Config.AdminPassword = testAPISecret, testAdminPassword
	m.Config.GHToken, m.Config.GHUser, m.Config.GHWebhookSecret, m.Config.GHAPIURL = token, "atoll-bot", webhookSecret, gh.URL+"/"
	m.Config.RepoAllowlist = "github.com/acme/*"
	m.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m.CredentialHelper = atollBinary(t)
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })

	files := map[string]string{"app/main.tf": tfProject("app", 1) + "\nmodule \"m\" {\n  source = \"git::" + source + "\"\n}\n"}
	sha := repo.branch("private-module", files)
	gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "private-module", BaseSHA: base, BaseRef: "main", Files: []string{"app/main.tf"}})
	webhook(t, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, 1, "opened", "private-module", sha, base))
	mustContain(t, "autoplan", waitFor(t, gh, 1, 1), "Plan: 2 to add", "module.m.terraform_data.m", "from the private module")
	webhook(t, m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, commentEvent(cloneURL, 1, "atlantis apply -d app"))
	mustContain(t, "apply", waitFor(t, gh, 1, 2), "Apply complete! Resources: 2 added")

	// Each request's grant ends with its jobs.
	eventually(t, 10*time.Second, "the runs' credential grants revoked", func() bool { return m.Credentials.Active() == 0 })
	for _, c := range gh.pullComments(1) {
		if strings.Contains(c, token) {
			t.Fatalf("a comment holds the token:\n%s", c)
		}
	}
	noSecretIn(t, dataDir, token, "while running") // with the database's WAL
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	noSecretIn(t, dataDir, token, "after stopping")
	if strings.Contains(logs.String(), token) {
		t.Fatalf("the server's log holds the token:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "git credential served") {
		t.Fatalf("the server's log does not show the credential helper asked:\n%s", logs.String())
	}
}

// noSecretIn fails t if a file under dataDir holds secret. It also checks
// that the walk saw what it vouches for: the work dirs' .git/config files
// and a private module m installed by terraform init.
func noSecretIn(t *testing.T, dataDir, secret, when string) {
	t.Helper()
	var gitConfigs, modules int
	err := filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s: %s holds the secret", when, path)
		}
		if strings.HasSuffix(path, "/.git/config") {
			gitConfigs++
		}
		if strings.HasSuffix(path, filepath.Join(".terraform", "modules", "m", "m", "main.tf")) {
			modules++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if gitConfigs == 0 || modules == 0 {
		t.Fatalf("%s: the data dir holds %d .git/config files and %d installed private modules", when, gitConfigs, modules)
	}
}

// newModuleRepo makes a git repository in dir holding module m, a
// terraform_data whose input is input, on main tagged v1.
func newModuleRepo(t *testing.T, dir, input string) *gitRepo {
	t.Helper()
	mod := &gitRepo{t: t, Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mod.git("init", "--quiet", "--initial-branch=main")
	mod.commit("module", map[string]string{"m/main.tf": "resource \"terraform_data\" \"m\" {\n  input = \"" + input + "\"\n}\n"})
	mod.git("tag", "v1")
	return mod
}

package main_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// With --gh-checks and a GitHub App, plans are reported as check runs, one
// per project and the aggregate, each completed in place, with the change
// counts, an excerpt and the job link; a failing plan fails its run. No
// commit status is set.
func TestGitHubChecksE2E(t *testing.T) {
	testEnv(t)
	e := &e2e{t: t, gh: newFakeGitHub(t), dataDir: t.TempDir()}
	e.repo = newGitRepo(t, map[string]string{
		"staging/main.tf":    tfProject("staging", 1),
		"production/main.tf": tfProject("production", 1),
	})
	e.base = e.repo.git("rev-parse", "main")
	e.cloneURL, _ = serveGit(t, e.repo, "gh-test-token")
	keyFile := appKey(t)
	e.m = startMain(t, e.dataDir, func(c *main.Config) {
		c.GHAppID, c.GHAppKeyFile, c.GHChecks = 99, keyFile, true
		c.GHWebhookSecret, c.GHAPIURL = webhookSecret, e.gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
	})
	t.Cleanup(func() { e.m.Close() })

	completed := func(sha, name, conclusion string) map[string]any {
		t.Helper()
		var run map[string]any
		eventually(t, 30*time.Second, fmt.Sprintf("check run %q %s", name, conclusion), func() bool {
			run, _ = e.gh.checkRun(sha, name)
			return run != nil && run["status"] == "completed" && run["conclusion"] == conclusion
		})
		if _, created := e.gh.checkRun(sha, name); created != 1 {
			t.Fatalf("%d check runs %q created; want 1, updated in place", created, name)
		}
		return run
	}

	sha1 := e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan comment", e.waitComment(1, 1), "Plan: 2 to add")
	run := completed(sha1, "atlantis/plan: staging/default", "success")
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=plan", &jobs)
	if len(jobs) != 1 {
		t.Fatalf("plan jobs = %+v", jobs)
	}
	if want := fmt.Sprintf("%s/jobs/%d", e.m.URL, jobs[0].ID); run["details_url"] != want {
		t.Errorf("details_url = %v; want %s", run["details_url"], want)
	}
	title, summary := checkOutput(run)
	if title != "2 to add, 0 to change, 0 to destroy." {
		t.Errorf("output title = %q", title)
	}
	mustContain(t, "check run summary", summary, "**+2 ~0 -0**", "# terraform_data.app[1] will be created", "Plan: 2 to add, 0 to change, 0 to destroy.")
	agg := completed(sha1, "atlantis/plan", "success")
	if title, _ := checkOutput(agg); title != "1/1 projects planned successfully." {
		t.Errorf("aggregate title = %q", title)
	}

	// A plan that fails fails its run and the aggregate.
	sha2 := e.open(2, "break-production", map[string]string{"production/main.tf": "resource \"no_such_provider_thing\" \"x\" {\n"}, "production/main.tf")
	e.waitComment(2, 1)
	run = completed(sha2, "atlantis/plan: production/default", "failure")
	if _, summary := checkOutput(run); !strings.Contains(summary, "Error") {
		t.Errorf("failed run's summary has no error excerpt:\n%s", summary)
	}
	completed(sha2, "atlantis/plan", "failure")

	if statuses := e.gh.Statuses(fakeRepo, ""); len(statuses) != 0 {
		t.Errorf("commit statuses set with --gh-checks: %+v", statuses)
	}
}

func appKey(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

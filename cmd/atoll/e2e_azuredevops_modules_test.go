package main_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

// fakeEntra is a Microsoft Entra ID token endpoint for one service
// principal: the client-credentials grant, as Azure DevOps clients use it.
type fakeEntra struct {
	*httptest.Server
	minted atomic.Int64
}

const (
	entraTenant, entraClient, entraSecret = "tenant-for-tests", "client-for-tests", "sp-secret-for-tests"
	adoSPToken                            = "entra-access-token-for-tests"
	adoSP                                 = "atoll-sp"
)

func newFakeEntra(t *testing.T) *fakeEntra {
	f := &fakeEntra{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/"+entraTenant+"/oauth2/v2.0/token" ||
			r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") != entraClient ||
			r.PostForm.Get("scope") != "499b84ac-1321-427f-aa17-267ca6975798/.default" {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": "AADSTS900144: bad request"})
			return
		}
		if r.PostForm.Get("client_secret") != entraSecret {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."})
			return
		}
		f.minted.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "expires_in": 3599, "access_token": adoSPToken})
	}))
	t.Cleanup(f.Close)
	return f
}

// Signed in as a service principal (Entra ID client credentials), Atoll
// plans and applies a project whose module lives in another private Azure
// Repos repository: terraform init clones it through Atoll's credential
// helper with the Entra token. The token and the client secret are written
// nowhere: not in the data dir (database, work dirs, .git/config,
// Terraform's data dirs), the server's log or the comments.
func TestAzureDevOpsServicePrincipalAndPrivateModule(t *testing.T) {
	testEnv(t)
	entra := newFakeEntra(t)
	az := azuretest.NewServer(t)
	az.AcceptBearer(adoSPToken, adoSP)

	// The module repository, in the same project, served by the same host.
	mod := newModuleRepo(t, filepath.Join(t.TempDir(), "modules"), "from the private module")
	az.AddRepo(adoOrg, adoProject, "modules")
	az.ServeGit(adoOrg, adoProject, "modules", mod.Dir)
	source := az.URL + "/" + adoOrg + "/" + adoProject + "/_git/modules//m?ref=v1"

	var logs lockedBuffer
	e := newADOE2EOn(t, az, map[string]string{"app/main.tf": tfProject("app", 1)}, func(m *main.Main) {
		c := &m.Config
		c.AzureToken, c.AzureUser = "", adoSP
		c.AzureTenantID, c.AzureClientID, c.AzureClientSecret, c.AzureAuthorityURL = entraTenant, entraClient, entraSecret, entra.URL
		m.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		m.CredentialHelper = atollBinary(t)
	})
	e.open(1, "private-module", map[string]string{"app/main.tf": tfProject("app", 1) + "\nmodule \"m\" {\n  source = \"git::" + source + "\"\n}\n"})
	// The service principal's comments: findable by its name.
	waitSP := func(n int) string {
		t.Helper()
		var got []string
		eventually(t, 90*time.Second, "the service principal's comments", func() bool {
			got = got[:0]
			for _, th := range az.Threads(adoOrg, adoProject, adoRepo, 1) {
				for _, c := range th.Comments {
					if c.Author == adoSP {
						got = append(got, c.Content)
					}
				}
			}
			return len(got) >= n
		})
		return got[n-1]
	}
	mustContain(t, "autoplan", waitSP(1), "Plan: 2 to add", "module.m.terraform_data.m", "from the private module")
	e.comment(1, "atlantis apply -d app")
	mustContain(t, "apply", waitSP(2), "Apply complete! Resources: 2 added")
	if az.Fetches(adoOrg, adoProject, "modules") == 0 {
		t.Fatal("the module repository was never fetched from the Azure host")
	}
	if n := entra.minted.Load(); n != 1 {
		t.Fatalf("Entra minted %d tokens for one run; want 1 (cached until near expiry)", n)
	}

	eventually(t, 10*time.Second, "the runs' credential grants revoked", func() bool { return e.m.Credentials.Active() == 0 })
	for _, th := range az.Threads(adoOrg, adoProject, adoRepo, 1) {
		for _, c := range th.Comments {
			if strings.Contains(c.Content, adoSPToken) || strings.Contains(c.Content, entraSecret) {
				t.Fatalf("a comment holds a secret:\n%s", c.Content)
			}
		}
	}
	for _, secret := range []string{adoSPToken, entraSecret} {
		noSecretIn(t, e.dataDir, secret, "while running")
	}
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{adoSPToken, entraSecret} {
		noSecretIn(t, e.dataDir, secret, "after stopping")
		if strings.Contains(logs.String(), secret) {
			t.Fatalf("the server's log holds a secret:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "git credential served") {
		t.Fatalf("the server's log does not show the credential helper asked:\n%s", logs.String())
	}
}

// A GitHub pull request whose project uses a module on Azure Repos: with
// both hosts configured, the run's credential helper answers for Azure
// DevOps too, and the PAT is written nowhere.
func TestGitHubPullRequestWithAModuleOnAzureRepos(t *testing.T) {
	testEnv(t)
	gh := newFakeGitHub(t)
	repo := newGitRepo(t, map[string]string{"app/main.tf": tfProject("app", 1)})
	base := repo.git("rev-parse", "main")
	cloneURL, _ := serveGit(t, repo, "gh-test-token")

	az := azuretest.NewServer(t)
	az.AcceptPAT(adoPAT, adoBot)
	mod := newModuleRepo(t, filepath.Join(t.TempDir(), "modules"), "from Azure Repos")
	az.AddRepo(adoOrg, adoProject, "modules")
	az.ServeGit(adoOrg, adoProject, "modules", mod.Dir)

	dataDir := t.TempDir()
	var logs lockedBuffer
	m := startMainWith(t, dataDir, func(m *main.Main) {
		c := &m.Config
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, gh.URL+"/"
		c.AzureHostname, c.AzureToken, c.AzureUser = az.URL, adoPAT, adoBot
		c.AzureWebhookUser, c.AzureWebhookPassword = adoHookUser, adoHookPass
		c.RepoAllowlist = "github.com/acme/*"
		m.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		m.CredentialHelper = atollBinary(t)
	})
	t.Cleanup(func() { m.Close() })

	source := az.URL + "/" + adoOrg + "/" + adoProject + "/_git/modules//m?ref=main"
	files := map[string]string{"app/main.tf": tfProject("app", 1) + "\nmodule \"m\" {\n  source = \"git::" + source + "\"\n}\n"}
	sha := repo.branch("azure-module", files)
	gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "azure-module", BaseSHA: base, BaseRef: "main", Files: []string{"app/main.tf"}})
	webhook(t, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, 1, "opened", "azure-module", sha, base))
	mustContain(t, "autoplan", waitFor(t, gh, 1, 1), "Plan: 2 to add", "module.m.terraform_data.m", "from Azure Repos")
	if az.Fetches(adoOrg, adoProject, "modules") == 0 {
		t.Fatal("the module was not fetched from Azure Repos")
	}
	eventually(t, 10*time.Second, "the run's credential grant revoked", func() bool { return m.Credentials.Active() == 0 })
	noSecretIn(t, dataDir, adoPAT, "while running")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	noSecretIn(t, dataDir, adoPAT, "after stopping")
	if strings.Contains(logs.String(), adoPAT) {
		t.Fatalf("the server's log holds the PAT:\n%s", logs.String())
	}
}

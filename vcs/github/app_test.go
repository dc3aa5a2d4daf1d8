package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ghp "github.com/atollhq/atoll/vcs/github"
)

func appKeyFile(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "app.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func appProvider(t *testing.T, f *fakeGitHub, user string) *ghp.Provider {
	t.Helper()
	p, err := ghp.New(ghp.Config{APIURL: f.URL + "/", AppID: 99, AppKeyFile: appKeyFile(t), User: user, WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The installation id in a webhook payload is used directly; other repos
// have theirs looked up once.
func TestAppInstallationTokens(t *testing.T) {
	f := newFake(t)
	p := appProvider(t, f, "")
	ctx := context.Background()

	body := readFixture(t, "github/octokit/pull_request.synchronize.json") // installation id 1
	ev, err := p.ParseWebhook(webhookRequest("pull_request", body, sign(body, secret)), body)
	if err != nil {
		t.Fatal(err)
	}
	ev.Repo.CloneURL = "https://github.com/Codertocat/Hello-World.git"
	url, err := p.CloneURL(ctx, ev.Repo)
	if err != nil {
		t.Fatal(err)
	}
	if url != "https://x-access-token:ghs_installationtoken-1@github.com/Codertocat/Hello-World.git" {
		t.Errorf("CloneURL = %q", url)
	}
	// Private modules authenticate as the same installation.
	cred, err := p.GitCredentials(ctx, ev.Repo)
	if err != nil {
		t.Fatal(err)
	}
	if cred.URL != "https://github.com" || cred.Username != "x-access-token" || cred.Password != "ghs_installationtoken-1" {
		t.Errorf("GitCredentials = %+v", cred)
	}
	if n := len(f.callsTo("GET", "/repos/Codertocat/Hello-World/installation")); n != 0 {
		t.Errorf("looked up an installation the payload named (%d calls)", n)
	}
	tokenCalls := f.callsTo("POST", "/app/installations/1/access_tokens")
	if len(tokenCalls) != 1 || !strings.HasPrefix(tokenCalls[0].Auth, "Bearer ey") {
		t.Fatalf("token calls = %+v; want one with a JWT", tokenCalls)
	}

	// octocat/Hello-World was never in a payload: GET its installation (42).
	for range 2 {
		if _, err := p.CreateComment(ctx, helloWorld, pullNum, "hi"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.callsTo("GET", "/repos/octocat/Hello-World/installation")); n != 1 {
		t.Errorf("installation lookups = %d, want 1 (cached)", n)
	}
	if n := len(f.callsTo("POST", "/app/installations/42/access_tokens")); n != 1 {
		t.Errorf("token mints = %d, want 1 (cached until expiry)", n)
	}
	for _, c := range f.callsTo("POST", "/repos/octocat/Hello-World/issues/1347/comments") {
		if c.Auth != "token ghs_installationtoken-42" {
			t.Errorf("comment Authorization = %q", c.Auth)
		}
	}
}

// With App auth and no User, the bot's login is "<slug>[bot]".
func TestAppHideCommentsUsesBotLogin(t *testing.T) {
	f := newFake(t)
	own := f.newComment("atoll-app[bot]", ghp.Marker("plan"))
	f.newComment("atoll-bot", ghp.Marker("plan"))
	p := appProvider(t, f, "")
	if err := p.HideComments(context.Background(), helloWorld, pullNum, "plan"); err != nil {
		t.Fatal(err)
	}
	calls := f.callsTo("POST", "/graphql")
	if len(calls) != 1 || !strings.Contains(string(calls[0].Body), own["node_id"].(string)) {
		t.Fatalf("graphql calls = %+v", calls)
	}
	if calls[0].Auth != "token ghs_installationtoken-42" {
		t.Errorf("graphql Authorization = %q", calls[0].Auth)
	}
	if app := f.callsTo("GET", "/app"); len(app) != 1 || !strings.HasPrefix(app[0].Auth, "Bearer ey") {
		t.Errorf("GET /app calls = %+v", app)
	}
}

// --gh-app-key gives the key itself (Atlantis's ATLANTIS_GH_APP_KEY): the
// App authenticates as with a key file.
func TestAppKeyFromContent(t *testing.T) {
	f := newFake(t)
	key, err := os.ReadFile(appKeyFile(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ghp.New(ghp.Config{APIURL: f.URL + "/", AppID: 99, AppKey: string(key), WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	body := readFixture(t, "github/octokit/pull_request.synchronize.json") // installation id 1
	ev, err := p.ParseWebhook(webhookRequest("pull_request", body, sign(body, secret)), body)
	if err != nil {
		t.Fatal(err)
	}
	ev.Repo.CloneURL = "https://github.com/Codertocat/Hello-World.git"
	url, err := p.CloneURL(context.Background(), ev.Repo)
	if err != nil || url != "https://x-access-token:ghs_installationtoken-1@github.com/Codertocat/Hello-World.git" {
		t.Fatalf("CloneURL = %q, %v", url, err)
	}
}

package azuredevops_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

func TestCloneURLAndGitCredentials(t *testing.T) {
	cases := []struct {
		name     string
		hostname string
		cred     patCredential
		repo     atoll.Repo
		clone    string
		credURL  string
	}{
		{"services", "", "tok", repo,
			"https://atoll:tok@dev.azure.com/contoso/Infra%20Live/_git/terraform", "https://dev.azure.com"},
		{"server with a virtual directory", "tfs.example.com/tfs", "tok",
			atoll.Repo{Owner: "DefaultCollection/Ops", Name: "live"},
			"https://atoll:tok@tfs.example.com/tfs/DefaultCollection/Ops/_git/live", "https://tfs.example.com"},
		{"http base URL with a port", "http://127.0.0.1:8080/tfs", "tok",
			atoll.Repo{Owner: "coll/p", Name: "r"},
			"http://atoll:tok@127.0.0.1:8080/tfs/coll/p/_git/r", "http://127.0.0.1:8080"},
		{"token with URL-special characters is escaped", "", "a/b@c:d", atoll.Repo{Owner: "o/p", Name: "r"},
			"https://atoll:a%2Fb%40c%3Ad@dev.azure.com/o/p/_git/r", "https://dev.azure.com"},
		{"payload clone URL is ignored", "", "tok",
			atoll.Repo{Owner: "o/p", Name: "r", CloneURL: "https://evil.example.com/o/p/_git/r", HTMLURL: "https://evil.example.com/"},
			"https://atoll:tok@dev.azure.com/o/p/_git/r", "https://dev.azure.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := azuredevops.New(azuredevops.Config{Hostname: tc.hostname, Credential: tc.cred})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.CloneURL(context.Background(), tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.clone {
				t.Errorf("CloneURL = %q, want %q", got, tc.clone)
			}
			gc, err := p.GitCredentials(context.Background(), tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			if want := (vcs.GitCredential{URL: tc.credURL, Username: "atoll", Password: string(tc.cred)}); gc != want {
				t.Errorf("GitCredentials = %+v, want %+v", gc, want)
			}
		})
	}
}

func TestCloneURLNeedsOrgProjectRepo(t *testing.T) {
	p, err := azuredevops.New(azuredevops.Config{Credential: patCredential("t")})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []atoll.Repo{{Owner: "o", Name: "r"}, {Owner: "o/p"}, {Owner: "o/p/q", Name: "r"}} {
		if _, err := p.CloneURL(context.Background(), r); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("CloneURL(%+v) err = %v; want EINVALID", r, err)
		}
		if _, err := p.GitCredentials(context.Background(), r); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("GitCredentials(%+v) err = %v; want EINVALID", r, err)
		}
	}
}

// With an Entra ID token, git over https sends it as a bearer token, as
// Microsoft documents it for Azure Repos; the URL holds no secret.
func TestCloneWithEntraBearer(t *testing.T) {
	f := newFakeEntra(t)
	cred := f.credential(newClock(), clientSecret)
	srv := azuretest.NewServer(t)
	srv.AcceptBearer("tok-1", bot)
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv.ServeGit(org, project, repoName, dir)
	p := newProvider(t, srv, func(c *azuredevops.Config) { c.Credential = cred })

	rawURL, auth, err := p.CloneAuthorization(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer tok-1" || strings.Contains(rawURL, "tok-1") || strings.Contains(rawURL, "@") {
		t.Fatalf("CloneAuthorization = %q, %q; want the bare URL and Bearer tok-1", rawURL, auth)
	}
	remote, err := git.NewRemoteAuthorization(rawURL, auth)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := git.Run(context.Background(), dir, remote.Env, "ls-remote", remote.URL); err != nil {
		t.Fatalf("git ls-remote with the bearer token: %v", err)
	}
	var sawBearer bool
	for _, c := range srv.Calls() {
		if strings.Contains(c.Path, "/_git/") {
			if strings.HasPrefix(c.Auth, "Basic ") {
				t.Errorf("git sent %s with basic auth", c.Path)
			}
			sawBearer = sawBearer || c.Auth == "Bearer tok-1"
		}
	}
	if !sawBearer {
		t.Errorf("git never sent the bearer token: %+v", srv.Calls())
	}
}

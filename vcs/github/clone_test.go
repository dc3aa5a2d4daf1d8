package github_test

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	ghp "github.com/atollhq/atoll/vcs/github"
)

func TestCloneURL(t *testing.T) {
	cases := []struct {
		name string
		cfg  ghp.Config
		repo atoll.Repo
		want string
	}{
		{
			name: "github.com",
			cfg:  ghp.Config{Token: "ghp_secrettoken"},
			repo: atlantisTests,
			want: "https://x-access-token:ghp_secrettoken@github.com/runatlantis/atlantis-tests.git",
		},
		{
			name: "enterprise host",
			cfg:  ghp.Config{Hostname: "ghe.example.com", Token: "ghp_secrettoken"},
			repo: atoll.Repo{Owner: "infra", Name: "live"},
			want: "https://x-access-token:ghp_secrettoken@ghe.example.com/infra/live.git",
		},
		{
			name: "custom API URL uses the payload's clone URL",
			cfg:  ghp.Config{APIURL: "http://127.0.0.1:9/", Token: "ghp_secrettoken"},
			repo: atoll.Repo{Owner: "octocat", Name: "Hello-World", CloneURL: "http://127.0.0.1:9/git/octocat/Hello-World.git"},
			want: "http://x-access-token:ghp_secrettoken@127.0.0.1:9/git/octocat/Hello-World.git",
		},
		{
			name: "custom API URL with a file clone URL takes no credentials",
			cfg:  ghp.Config{APIURL: "http://127.0.0.1:9/", Token: "ghp_secrettoken"},
			repo: atoll.Repo{Owner: "octocat", Name: "Hello-World", CloneURL: "file:///srv/git/Hello-World.git"},
			want: "file:///srv/git/Hello-World.git",
		},
		{
			name: "custom API URL without a clone URL falls back to the host",
			cfg:  ghp.Config{APIURL: "http://127.0.0.1:9/", Token: "ghp_secrettoken"},
			repo: atoll.Repo{Owner: "octocat", Name: "Hello-World"},
			want: "https://x-access-token:ghp_secrettoken@github.com/octocat/Hello-World.git",
		},
		{
			name: "token with URL-special characters is escaped",
			cfg:  ghp.Config{Token: "a/b@c:d"},
			repo: atoll.Repo{Owner: "o", Name: "r"},
			want: "https://x-access-token:a%2Fb%40c%3Ad@github.com/o/r.git",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ghp.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.CloneURL(context.Background(), tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("CloneURL = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCloneURLNeedsRepo(t *testing.T) {
	p, err := ghp.New(ghp.Config{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.CloneURL(context.Background(), atoll.Repo{Owner: "o"}); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("err = %v; want EINVALID", err)
	}
}

// Git over https (private module sources) gets the clone credentials for
// the host repositories are cloned from, as scheme and host only.
func TestGitCredentials(t *testing.T) {
	cases := []struct {
		name string
		cfg  ghp.Config
		repo atoll.Repo
		want vcs.GitCredential
	}{
		{"github.com", ghp.Config{Token: "ghp_secrettoken"}, atlantisTests,
			vcs.GitCredential{URL: "https://github.com", Username: "x-access-token", Password: "ghp_secrettoken"}},
		{"enterprise host", ghp.Config{Hostname: "ghe.example.com", Token: "ghp_secrettoken"}, atoll.Repo{Owner: "infra", Name: "live"},
			vcs.GitCredential{URL: "https://ghe.example.com", Username: "x-access-token", Password: "ghp_secrettoken"}},
		{"custom API URL: the payload's clone URL's host", ghp.Config{APIURL: "http://127.0.0.1:9/", Token: "ghp_secrettoken"},
			atoll.Repo{Owner: "octocat", Name: "Hello-World", CloneURL: "http://127.0.0.1:9/git/octocat/Hello-World.git"},
			vcs.GitCredential{URL: "http://127.0.0.1:9", Username: "x-access-token", Password: "ghp_secrettoken"}},
		{"file clone URL: none", ghp.Config{APIURL: "http://127.0.0.1:9/", Token: "ghp_secrettoken"},
			atoll.Repo{Owner: "octocat", Name: "Hello-World", CloneURL: "file:///srv/git/Hello-World.git"},
			vcs.GitCredential{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ghp.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.GitCredentials(context.Background(), tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("GitCredentials = %+v, want %+v", got, tc.want)
			}
		})
	}
	p, _ := ghp.New(ghp.Config{Token: "t"})
	if _, err := p.GitCredentials(context.Background(), atoll.Repo{Owner: "o"}); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("err = %v; want EINVALID", err)
	}
}

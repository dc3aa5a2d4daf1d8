package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs/github/githubtest"
)

// TestGHAllowMergeableBypassApplyWiring checks that the flag and
// --vcs-status-name reach the GitHub provider: a pull request blocked only
// by the required NAME/apply is mergeable with the flag, not without it,
// and not when the required apply check is another prefix's unless
// --ignore-vcs-status-names names that prefix.
func TestGHAllowMergeableBypassApplyWiring(t *testing.T) {
	gh := githubtest.NewServer(t)
	gh.AcceptToken("ghp_x")
	gh.SetPull(githubtest.Pull{Repo: "octocat/Hello-World", Number: 1347, BaseRef: "main",
		Fields: map[string]any{"mergeable": true, "mergeable_state": "blocked"}})
	gh.SetProtection("octocat/Hello-World", githubtest.Protection{Branch: "main", Required: []string{"infra/apply"}})

	cases := []struct {
		name string
		args []string
		want bool
	}{
		{"flag and prefix", []string{"--gh-allow-mergeable-bypass-apply", "--vcs-status-name", "infra"}, true},
		{"flag off", []string{"--vcs-status-name", "infra"}, false},
		{"another prefix", []string{"--gh-allow-mergeable-bypass-apply"}, false},
		{"another prefix ignored", []string{"--gh-allow-mergeable-bypass-apply", "--ignore-vcs-status-names", "staging, infra"}, true},
		{"another prefix ignored, flag off", []string{"--ignore-vcs-status-names", "infra"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			args := append([]string{"--gh-token", "ghp_x", "--gh-webhook-secret", "s", "--gh-api-url", gh.URL + "/", "--repo-allowlist", "github.com/octocat/*"}, tc.args...)
			if err := c.Parse(args, func(string) string { return "" }); err != nil {
				t.Fatal(err)
			}
			m := &Main{Config: c, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			providers, err := m.providers()
			if err != nil {
				t.Fatal(err)
			}
			got, err := providers[atoll.VCSGitHub].GetPull(context.Background(),
				atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "octocat", Name: "Hello-World"}, 1347)
			if err != nil {
				t.Fatal(err)
			}
			if got.Mergeable != tc.want {
				t.Errorf("Mergeable = %v, want %v", got.Mergeable, tc.want)
			}
		})
	}
}

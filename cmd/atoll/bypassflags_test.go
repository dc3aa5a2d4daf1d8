package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/atollhq/atoll"
)

// TestGHAllowMergeableBypassApplyWiring checks that the flag and
// --vcs-status-name reach the GitHub provider: a pull request blocked only
// by the required NAME/apply is mergeable with the flag, not without it,
// and not when the required apply check is another prefix's unless
// --ignore-vcs-status-names names that prefix.
func TestGHAllowMergeableBypassApplyWiring(t *testing.T) {
	pull, err := os.ReadFile("../../vcs/github/testdata/github/api.pull_request.json")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(pull, &body); err != nil {
		t.Fatal(err)
	}
	body["mergeable"], body["mergeable_state"] = true, "blocked"
	repo := "/repos/octocat/Hello-World"
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+repo+"/pulls/1347", func(w http.ResponseWriter, r *http.Request) { bypassJSON(w, body) })
	mux.HandleFunc("GET "+repo+"/pulls/1347/reviews", func(w http.ResponseWriter, r *http.Request) { bypassJSON(w, []any{}) })
	mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		bypassJSON(w, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{"reviewDecision": nil}}}})
	})
	mux.HandleFunc("GET "+repo+"/branches/{branch}/protection/required_status_checks", func(w http.ResponseWriter, r *http.Request) {
		bypassJSON(w, map[string]any{"strict": false, "contexts": []string{"infra/apply"},
			"checks": []map[string]any{{"context": "infra/apply", "app_id": nil}}})
	})
	mux.HandleFunc("GET "+repo+"/rules/branches/{branch}", func(w http.ResponseWriter, r *http.Request) { bypassJSON(w, []any{}) })
	mux.HandleFunc("GET "+repo+"/commits/{ref}/status", func(w http.ResponseWriter, r *http.Request) {
		bypassJSON(w, map[string]any{"state": "pending", "statuses": []any{}, "total_count": 0})
	})
	mux.HandleFunc("GET "+repo+"/commits/{ref}/check-runs", func(w http.ResponseWriter, r *http.Request) {
		bypassJSON(w, map[string]any{"total_count": 0, "check_runs": []any{}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

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
			args := append([]string{"--gh-token", "ghp_x", "--gh-webhook-secret", "s", "--gh-api-url", srv.URL + "/", "--repo-allowlist", "github.com/octocat/*"}, tc.args...)
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

func bypassJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v)
}

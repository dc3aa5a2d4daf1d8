package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
	ghp "github.com/atollhq/atoll/vcs/github"
	"github.com/atollhq/atoll/vcs/local"
	"github.com/atollhq/atoll/web"
)

// The host of a webhook is the first of the server's hosts that recognises
// its headers; web itself knows no host's headers.
func TestWebhookHostByHeaders(t *testing.T) {
	known := []vcs.Recognizer{ghp.Recognizer{}, azuredevops.Recognizer{}}
	githubOnly := func(s *web.Server) { s.Hosts = known }
	noGitHub := func(s *web.Server) {
		s.Hosts = known
		s.Providers = map[string]vcs.Provider{atoll.VCSLocal: &local.Provider{DB: s.DB.(*store.DB)}}
	}
	unlisted := func(s *web.Server) { s.Hosts = nil }
	tests := []struct {
		name      string
		configure func(*web.Server)
		headers   map[string]string
		status    int
		message   string // in the body
	}{
		// An unsigned GitHub webhook reaching the GitHub provider is refused by it.
		{"github", githubOnly, map[string]string{"X-GitHub-Event": "ping"}, 401, ""},
		{"github before azure", githubOnly, map[string]string{"X-GitHub-Event": "ping", "Authorization": "Basic eDp5"}, 401, ""},
		{"azure not configured", githubOnly, map[string]string{"Authorization": "Basic eDp5"}, 400, "Webhooks from azuredevops are not configured on this server."},
		{"azure activity id", githubOnly, map[string]string{"X-Vss-ActivityId": "b2c1"}, 400, "Webhooks from azuredevops are not configured on this server."},
		{"github not configured", noGitHub, map[string]string{"X-GitHub-Event": "ping"}, 400, "Webhooks from github are not configured on this server."},
		{"unrecognised", githubOnly, nil, 400, "Unrecognised webhook: expected an X-GitHub-Event header or an X-Vss-ActivityId or Authorization header."},
		// Without a list of hosts the configured providers are asked.
		{"configured only", unlisted, map[string]string{"X-GitHub-Event": "ping"}, 401, ""},
		{"configured only, unrecognised", unlisted, nil, 400, "Unrecognised webhook: expected an X-GitHub-Event header."},
		{"no webhook host", func(s *web.Server) { noGitHub(s); s.Hosts = nil }, nil, 400, "Unrecognised webhook: no VCS host that sends webhooks is configured."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startLiveServer(t, tc.configure)
			req, _ := http.NewRequest("POST", s.URL+"/events", strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status || !strings.Contains(string(body), tc.message) {
				t.Fatalf("status %d, %s; want %d with %q", res.StatusCode, body, tc.status, tc.message)
			}
		})
	}
}

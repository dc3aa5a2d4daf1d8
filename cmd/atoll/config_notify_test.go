package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// --webhooks-config, --slack-token and --webhook-http-headers: Atlantis's
// webhooks list from a file (an Atlantis --config file works), its secrets
// from flags or ATLANTIS_* variables, and every bad input a start-up error
// that names the entry and key, never a secret.
func TestNotifyConfig(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	both := file("atlantis.yaml", "gh-user: bot\nwebhooks:\n- event: apply\n  kind: http\n  url: https://hooks.example/x\n- event: apply\n  kind: slack\n  channel: ops\n")
	httpOnly := file("http.json", `{"webhooks":[{"event":"apply","kind":"http","url":"http://127.0.0.1:9/"}]}`)
	tokenFile := file("slack-token", "xoxb-from-file\n")
	base := []string{"--repo-allowlist", "github.com/acme/*"}
	cases := []parseCase{
		{"no webhooks", nil, nil, func(c *main.Config) bool { return len(c.Webhooks()) == 0 }, ""},
		{"an Atlantis config file with ATLANTIS_SLACK_TOKEN", []string{"--webhooks-config", both}, map[string]string{"ATLANTIS_SLACK_TOKEN": "xoxb-atlantis"},
			func(c *main.Config) bool {
				return strings.Join(c.Webhooks(), ",") == "http,slack" && c.SlackToken == "xoxb-atlantis"
			}, ""},
		{"ATOLL_WEBHOOKS_CONFIG and --slack-token-file", []string{"--slack-token-file", tokenFile}, map[string]string{"ATOLL_WEBHOOKS_CONFIG": both},
			func(c *main.Config) bool { return len(c.Webhooks()) == 2 && c.SlackToken == "xoxb-from-file" }, ""},
		{"JSON, with headers", []string{"--webhooks-config", httpOnly, "--webhook-http-headers", `{"Authorization":"Bearer h","X-A":["1","2"]}`}, nil,
			func(c *main.Config) bool { return len(c.Webhooks()) == 1 }, ""},
		{"headers from ATLANTIS_WEBHOOK_HTTP_HEADERS", []string{"--webhooks-config", httpOnly}, map[string]string{"ATLANTIS_WEBHOOK_HTTP_HEADERS": `{"X-Key":"k"}`},
			func(c *main.Config) bool { return c.WebhookHTTPHeaders == `{"X-Key":"k"}` }, ""},
		{"slack without a token", []string{"--webhooks-config", both}, nil, nil, "webhooks[1].kind: slack needs --slack-token"},
		{"a missing file", []string{"--webhooks-config", filepath.Join(dir, "nope.yaml")}, nil, nil, "--webhooks-config " + filepath.Join(dir, "nope.yaml")},
		{"a bad entry", []string{"--webhooks-config", file("bad.yaml", "webhooks:\n- {event: apply, kind: http, url: 'https://x/'}\n- {event: apply, kind: http}\n")}, nil, nil, "webhooks[1].url: required"},
		{"drift", []string{"--webhooks-config", file("drift.yaml", "webhooks:\n- {event: drift, kind: http, url: 'https://x/'}\n")}, nil,
			func(c *main.Config) bool { return strings.Join(c.Webhooks(), ",") == "http" }, ""},
		{"drift without a url", []string{"--webhooks-config", file("drift2.yaml", "webhooks:\n- {event: drift, kind: http}\n")}, nil, nil, "webhooks[0].url: required"},
		{"a bad regexp", []string{"--webhooks-config", file("re.yaml", "webhooks:\n- {event: apply, kind: http, url: 'https://x/', branch-regex: '(' }\n")}, nil, nil, "webhooks[0].branch-regex"},
		{"bad headers", []string{"--webhook-http-headers", `{"Authorization": 42, "t": "hdr-secret"}`}, nil, nil, "--webhook-http-headers: header \"Authorization\""},
		{"headers not JSON", nil, map[string]string{"ATOLL_WEBHOOK_HTTP_HEADERS": "Authorization: hdr-secret"}, nil, "--webhook-http-headers: not a JSON object"},
	}
	runParseCases(t, base, cases, "hdr-secret")
}

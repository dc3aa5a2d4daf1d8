package notify_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll/runner/notify"
)

func TestParseWebhooks(t *testing.T) {
	// An Atlantis --config file, unchanged: its other keys are ignored.
	atlantisConfig := `
gh-user: atlantis-bot
repo-allowlist: github.com/acme/*
slack-token: xoxb-ignored-here
webhooks:
  - event: apply
    workspace-regex: "^prod"
    branch-regex: "^main$"
    kind: slack
    channel: infra
  - event: apply
    kind: http
    url: https://hooks.example/atlantis
`
	webhooks, err := notify.Parse([]byte(atlantisConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(webhooks) != 2 {
		t.Fatalf("got %d webhooks, want 2", len(webhooks))
	}
	s, h := webhooks[0], webhooks[1]
	if s.Kind != "slack" || s.Channel != "infra" || s.WorkspaceRegex != "^prod" || s.BranchRegex != "^main$" || h.Kind != "http" || h.URL != "https://hooks.example/atlantis" {
		t.Errorf("parsed %+v", webhooks)
	}
	for _, c := range []struct {
		ws, branch string
		slack      bool
	}{{"prod-eu", "main", true}, {"staging", "main", false}, {"prod", "develop", false}} {
		if got := s.Matches(c.ws, c.branch); got != c.slack {
			t.Errorf("slack entry matches(%q, %q) = %v, want %v", c.ws, c.branch, got, c.slack)
		}
		if !h.Matches(c.ws, c.branch) {
			t.Errorf("an entry without regexps must match everything, not (%q, %q)", c.ws, c.branch)
		}
	}

	// JSON is read too.
	j, err := notify.Parse([]byte(`{"webhooks": [{"event": "apply", "kind": "http", "url": "http://127.0.0.1:9/x"}], "port": 4141}`))
	if err != nil || len(j) != 1 || j[0].URL != "http://127.0.0.1:9/x" {
		t.Errorf("JSON: %+v, %v", j, err)
	}
}

func TestParseWebhooksErrors(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"not yaml", "webhooks: [", "not a YAML or JSON document"},
		{"no list", "gh-user: x\n", "no webhooks"},
		{"empty list", "webhooks: []\n", "no webhooks"},
		{"list of strings", "webhooks: [apply]\n", "webhooks[0]: an entry is a map"},
		{"no event", "webhooks:\n- kind: http\n  url: http://x/\n", "webhooks[0].event: required"},
		{"drift without url", "webhooks:\n- event: drift\n  kind: http\n", "webhooks[0].url: required with kind http"},
		{"drift bad kind", "webhooks:\n- event: drift\n  kind: teams\n", `webhooks[0].kind: "teams" is not supported`},
		{"plan event", "webhooks:\n- event: plan\n  kind: http\n  url: http://x/\n", `webhooks[0].event: "plan" is not supported: apply or drift`},
		{"no kind", "webhooks:\n- event: apply\n", "webhooks[0].kind: required"},
		{"bad kind", "webhooks:\n- event: apply\n  kind: teams\n", `webhooks[0].kind: "teams" is not supported`},
		{"http without url", "webhooks:\n- event: apply\n  kind: slack\n  channel: c\n- event: apply\n  kind: http\n", "webhooks[1].url: required with kind http"},
		{"url not http", "webhooks:\n- event: apply\n  kind: http\n  url: ftp://x/\n", "webhooks[0].url: not an http or https URL"},
		{"slack without channel", "webhooks:\n- event: apply\n  kind: slack\n", "webhooks[0].channel: required with kind slack"},
		{"bad workspace regex", "webhooks:\n- event: apply\n  kind: slack\n  channel: c\n  workspace-regex: '('\n", "webhooks[0].workspace-regex: error parsing regexp"},
		{"bad branch regex", "webhooks:\n- event: apply\n  kind: slack\n  channel: c\n  branch-regex: '[z-a]'\n", "webhooks[0].branch-regex: error parsing regexp"},
		{"unknown key", "webhooks:\n- event: apply\n  kind: slack\n  channel: c\n  workspace_regex: prod\n", "webhooks[0].workspace_regex: unknown key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := notify.Parse([]byte(c.doc))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := notify.ReadFile(filepath.Join(t.TempDir(), "missing.yaml")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := notify.ParseHeaders(`{"Authorization": "Bearer s3cret", "X-Multi": ["a", "b"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"Authorization": {"Bearer s3cret"}, "X-Multi": {"a", "b"}}; !reflect.DeepEqual(h, want) {
		t.Errorf("headers = %v, want %v", h, want)
	}
	if h, err := notify.ParseHeaders(""); h != nil || err != nil {
		t.Errorf(`"" = %v, %v; want none`, h, err)
	}
	for _, bad := range []string{`not json s3cret`, `["s3cret"]`, `{"A": 1}`, `{"A": ["s3cret", 2]}`, `{"A": {"b": "s3cret"}}`, `{"A": null}`} {
		_, err := notify.ParseHeaders(bad)
		if err == nil {
			t.Errorf("%s: no error", bad)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error quotes a value: %v", bad, err)
		}
	}
}

// Atlantis's drift webhooks: kinds http and slack, and (as Atlantis) their
// regexes are not read, so a bad one does not stop the server.
func TestParseDriftWebhooks(t *testing.T) {
	w, err := notify.Parse([]byte("webhooks:\n- {event: drift, kind: http, url: 'http://x/', workspace-regex: '('}\n- {event: drift, kind: slack, channel: ops}\n- {event: apply, kind: http, url: 'http://y/'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 3 || w[0].Event != notify.EventDrift || w[1].Kind != notify.KindSlack || w[2].Event != notify.EventApply {
		t.Fatalf("webhooks %+v", w)
	}
}

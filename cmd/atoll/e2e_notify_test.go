package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/runner/notify"
)

// receiver is an HTTP endpoint that records what it is sent and fails the
// first fail requests with 503.
type receiver struct {
	mu   sync.Mutex
	fail int
	reqs []received
}

type received struct {
	path   string
	header http.Header
	body   []byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.reqs = append(rc.reqs, received{path: r.Method + " " + r.URL.Path, header: r.Header.Clone(), body: body})
	if rc.fail > 0 {
		rc.fail--
		http.Error(w, "try later", http.StatusServiceUnavailable)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/chat.postMessage") {
		io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1.2"}`)
	}
}

func (rc *receiver) got() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.reqs...)
}

// An apply sends Atlantis's webhooks: an HTTP POST with the configured
// headers and Atlantis's ApplyResult fields (retried until the receiver
// answers 2xx), and a Slack chat.postMessage with the bot token; entries
// whose workspace or base-branch regexp does not match send nothing, and a
// failed apply notifies with Success false. The secrets reach neither the
// database nor the log.
func TestNotificationsOnApply(t *testing.T) {
	const slackToken, headerSecret = "xoxb-e2e-slack-secret", "hdr-e2e-secret"
	hook := &receiver{fail: 2}
	hookSrv := httptest.NewServer(hook)
	defer hookSrv.Close()
	other := &receiver{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	slack := &receiver{}
	slackSrv := httptest.NewServer(slack)
	defer slackSrv.Close()

	dir := t.TempDir()
	config := filepath.Join(dir, "atlantis.yaml")
	os.WriteFile(config, []byte(`# an Atlantis --config file
gh-user: atoll-bot
webhooks:
  - event: apply
    kind: http
    url: `+hookSrv.URL+`/hook
    workspace-regex: "^default$"
    branch-regex: "^main$"
  - event: apply
    kind: slack
    channel: infra-ops
  - event: apply
    kind: http
    url: `+otherSrv.URL+`/prod-only
    workspace-regex: "^prod$"
  - event: apply
    kind: http
    url: `+otherSrv.URL+`/head-branch
    branch-regex: "^scale-staging$"
`), 0o600)

	testEnv(t)
	e := &e2e{t: t, gh: newFakeGitHub(t), dataDir: t.TempDir()}
	e.repo = newGitRepo(t, map[string]string{"staging/main.tf": tfProject("staging", 1), "production/main.tf": tfProject("production", 1)})
	e.base = e.repo.git("rev-parse", "main")
	e.cloneURL, _ = serveGit(t, e.repo, "gh-test-token")
	var logs lockedBuffer
	e.m = startMainWith(t, e.dataDir, func(m *main.Main) {
		c := &m.Config
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, e.gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		c.WebhooksConfig, c.SlackToken = config, slackToken
		c.WebhookHTTPHeaders = `{"Authorization": "Bearer ` + headerSecret + `", "X-Atoll-Test": ["a", "b"]}`
		c.SlackAPIURL, c.NotifyRetryBackoff = slackSrv.URL+"/api/", 50*time.Millisecond
		m.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	closed := false
	defer func() {
		if !closed {
			e.m.Close()
		}
	}()

	sha := e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan comment", e.waitComment(1, 1), "to add")
	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "apply comment", e.waitComment(1, 2), "Apply complete")

	eventually(t, 30*time.Second, "the webhook delivered after two failures", func() bool { return len(hook.got()) == 3 })
	eventually(t, 30*time.Second, "the Slack message", func() bool { return len(slack.got()) == 1 })

	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=apply", &jobs)
	if len(jobs) != 1 {
		t.Fatalf("apply jobs = %+v", jobs)
	}
	jobURL := e.m.URL + "/jobs/" + strconv.FormatInt(jobs[0].ID, 10)
	var rows []string
	eventually(t, 10*time.Second, "both notifications recorded sent", func() bool {
		states, err := e.m.DB.Notifications(context.Background(), jobs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		rows = nil
		for _, s := range states {
			rows = append(rows, s.Kind)
			if !s.Sent {
				return false
			}
		}
		return len(states) == 2 && states[0].Dest == 0 && states[0].Attempts == 3 && states[1].Dest == 1 && states[1].Attempts == 1
	})
	if strings.Join(rows, ",") != "http,slack" {
		t.Fatalf("notification rows = %v: the entries whose regexps do not match must queue nothing", rows)
	}

	reqs := hook.got()
	for _, r := range reqs {
		if r.path != "POST /hook" || r.header.Get("Content-Type") != "application/json" || r.header.Get("Authorization") != "Bearer "+headerSecret ||
			strings.Join(r.header.Values("X-Atoll-Test"), ",") != "a,b" {
			t.Errorf("webhook request %s, headers %v", r.path, r.header)
		}
		if !bytes.Equal(r.body, reqs[0].body) {
			t.Errorf("a retry sent another payload:\n%s\n%s", r.body, reqs[0].body)
		}
		for _, secret := range []string{"gh-test-token", slackToken, headerSecret} {
			if bytes.Contains(r.body, []byte(secret)) {
				t.Errorf("the webhook payload holds %q: %s", secret, r.body)
			}
		}
	}
	var res notify.ApplyResult
	if err := json.Unmarshal(reqs[0].body, &res); err != nil {
		t.Fatal(err)
	}
	want := notify.ApplyResult{Workspace: "default", Success: true, Directory: "staging", JobURL: jobURL, User: notify.User{Username: "alice"}}
	if res.Workspace != want.Workspace || res.Success != want.Success || res.Directory != want.Directory || res.ProjectName != "" ||
		res.JobURL != want.JobURL || res.User.Username != "alice" {
		t.Errorf("payload = %+v, want %+v", res, want)
	}
	if res.Repo.FullName != "acme/infra" || res.Repo.Owner != "acme" || res.Repo.Name != "infra" || res.Repo.VCSHost.Hostname != "github.com" ||
		res.Repo.CloneURL == "" || strings.Contains(res.Repo.CloneURL, "@") || res.Repo.SanitizedCloneURL != res.Repo.CloneURL {
		t.Errorf("payload Repo = %+v", res.Repo)
	}
	if p := res.Pull; p.Num != 1 || p.HeadCommit != sha || p.HeadBranch != "scale-staging" || p.BaseBranch != "main" || p.Author != "alice" ||
		p.URL != "https://github.com/acme/infra/pull/1" || p.BaseRepo.FullName != "acme/infra" {
		t.Errorf("payload Pull = %+v", p)
	}
	// Atlantis's field names, as receivers written for Atlantis read them.
	mustContain(t, "webhook payload", string(reqs[0].body), `"Workspace":`, `"Repo":{"FullName":`, `"SanitizedCloneURL":`, `"Pull":{"Num":1,"HeadCommit":`,
		`"HeadBranch":`, `"BaseBranch":"main"`, `"User":{"Username":"alice"`, `"Success":true`, `"Directory":"staging"`, `"ProjectName":""`)

	s := slack.got()[0]
	var msg struct {
		Channel     string `json:"channel"`
		Text        string `json:"text"`
		Attachments []struct {
			Color  string `json:"color"`
			Fields []struct{ Title, Value string }
		} `json:"attachments"`
	}
	if err := json.Unmarshal(s.body, &msg); err != nil {
		t.Fatal(err)
	}
	if s.path != "POST /api/chat.postMessage" || s.header.Get("Authorization") != "Bearer "+slackToken || msg.Channel != "infra-ops" ||
		len(msg.Attachments) != 1 || msg.Attachments[0].Color != "good" {
		t.Errorf("slack request %s %v: %s", s.path, s.header, s.body)
	}
	mustContain(t, "slack text", msg.Text, "Apply succeeded for <https://github.com/acme/infra/pull/1|acme/infra#1> by alice", jobURL)

	// A failed apply notifies too, with Success false.
	e.open(2, "break-production", map[string]string{"production/main.tf": tfProject("production", 1) +
		"resource \"terraform_data\" \"boom\" {\n  provisioner \"local-exec\" {\n    command = \"exit 3\"\n  }\n}\n"}, "production/main.tf")
	mustContain(t, "autoplan comment", e.waitComment(2, 1), "to add")
	e.comment(2, "atlantis apply")
	mustContain(t, "failed apply comment", e.waitComment(2, 2), "Error")
	eventually(t, 30*time.Second, "the failed apply's webhook", func() bool { return len(hook.got()) == 4 && len(slack.got()) == 2 })
	if err := json.Unmarshal(hook.got()[3].body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Success || res.Directory != "production" || res.Pull.Num != 2 {
		t.Errorf("failed apply payload = %+v", res)
	}
	mustContain(t, "slack text", string(slack.got()[1].body), "Apply failed for", `"color":"danger"`)
	if n := len(other.got()); n != 0 {
		t.Errorf("entries whose regexps do not match got %d requests", n)
	}

	// The retries were logged, without the secrets; the database holds none.
	e.m.Close()
	closed = true
	mustContain(t, "server log", logs.String(), "notification failed: retrying", "notification sent")
	for _, secret := range []string{slackToken, headerSecret} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the server log holds %q", secret)
		}
		for _, f := range []string{"atoll.db", "atoll.db-wal"} {
			b, err := os.ReadFile(filepath.Join(e.dataDir, f))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds %q", f, secret)
			}
		}
	}
}

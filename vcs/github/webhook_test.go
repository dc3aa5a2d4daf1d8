package github_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	ghp "github.com/atollhq/atoll/vcs/github"
)

const secret = "s3cret"

func sign(body []byte, key string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func webhookRequest(event string, body []byte, sig string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-GitHub-Event", event)
	r.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	if sig != "" {
		r.Header.Set("X-Hub-Signature-256", sig)
	}
	return r
}

func tokenProvider(t *testing.T) *ghp.Provider {
	t.Helper()
	p, err := ghp.New(ghp.Config{User: "atoll-bot", Token: "ghp_secrettoken", WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// commentFixture is the Atlantis issue_comment fixture with its body
// placeholder replaced, quotes included, by a JSON-encoded comment.
func commentFixture(t *testing.T, comment string) []byte {
	t.Helper()
	enc, err := json.Marshal(comment)
	if err != nil {
		t.Fatal(err)
	}
	raw := readFixture(t, "github/issue_comment.created.json")
	if !bytes.Contains(raw, []byte(`"###comment body###"`)) {
		t.Fatal("placeholder missing from issue_comment fixture")
	}
	return bytes.Replace(raw, []byte(`"###comment body###"`), enc, 1)
}

// editJSON decodes a fixture, lets edit change it, and re-encodes it.
func editJSON(t *testing.T, raw []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

var (
	atlantisTests = atoll.Repo{
		VCS: atoll.VCSGitHub, Host: "github.com", Owner: "runatlantis", Name: "atlantis-tests",
		CloneURL: "https://github.com/runatlantis/atlantis-tests.git",
		HTMLURL:  "https://github.com/runatlantis/atlantis-tests",
	}
	// Names are lower-cased (GitHub's are case-insensitive); links are not.
	codertocat = atoll.Repo{
		VCS: atoll.VCSGitHub, Host: "github.com", Owner: "codertocat", Name: "hello-world",
		CloneURL: "https://github.com/Codertocat/Hello-World.git",
		HTMLURL:  "https://github.com/Codertocat/Hello-World",
	}
	codertocatPull = atoll.Pull{
		Repo: "codertocat/hello-world", Number: 2, Title: "Update the README with new information.",
		Author: "Codertocat", HeadSHA: "ec26c3e57ca3a959ca5aad62de7213c562f8c821", HeadRef: "changes",
		BaseSHA: "f95f852bd8fca8fcc58a9a2d6c842781e32a215e", BaseRef: "master", State: atoll.PullOpen,
		URL: "https://github.com/Codertocat/Hello-World/pull/2", CreatedAt: ts("2019-05-15T15:20:33Z"), UpdatedAt: ts("2019-05-15T15:20:33Z"),
	}
)

const deliveryID = "72d3162e-cc78-11e3-81ab-4c9367dc0958"

type webhookCase struct {
	name    string
	fixture string // under testdata/
	event   string // X-GitHub-Event
	body    func(t *testing.T) []byte
	want    *vcs.Event // nil: ignored
}

func webhookCases() []webhookCase {
	fixture := func(name string) func(*testing.T) []byte {
		return func(t *testing.T) []byte { return readFixture(t, name) }
	}
	closed := codertocatPull
	closed.State, closed.UpdatedAt = atoll.PullClosed, ts("2019-05-15T15:21:18Z")
	merged := closed
	merged.State = atoll.PullMerged
	updated := codertocatPull
	updated.UpdatedAt = ts("2019-05-15T15:21:18Z")
	atlantisOpened := atoll.Pull{
		Repo: "runatlantis/atlantis-tests", Number: 2, Title: "branch", Author: "runatlantis",
		HeadSHA: "c31fd9ea6f557ad2ea659944c3844a059b83bc5d", HeadRef: "branch",
		BaseSHA: "f59a822e83b3cd193142c7624ea635a5d7894388", BaseRef: "main", State: atoll.PullOpen,
		URL: "https://github.com/runatlantis/atlantis-tests/pull/2", CreatedAt: ts("2018-06-11T16:22:16Z"), UpdatedAt: ts("2018-06-11T16:22:16Z"),
	}
	atlantisClosed := atoll.Pull{
		Repo: "runatlantis/atlantis-tests", Number: 2, Title: "Add new project layouts", Author: "runatlantis",
		HeadSHA: "5e2d140b2d74bf61675677f01dc947ae8512e18e", HeadRef: "atlantisyaml",
		BaseSHA: "f59a822e83b3cd193142c7624ea635a5d7894388", BaseRef: "main", State: atoll.PullClosed,
		URL: "https://github.com/runatlantis/atlantis-tests/pull/2", CreatedAt: ts("2018-06-07T12:45:41Z"), UpdatedAt: ts("2018-06-16T16:55:19Z"),
	}
	return []webhookCase{
		{
			name: "atlantis pull_request opened", fixture: "github/pull_request.opened.json", event: "pull_request",
			body: fixture("github/pull_request.opened.json"),
			want: &vcs.Event{Kind: vcs.EventPullOpened, DeliveryID: deliveryID, Repo: atlantisTests, User: "runatlantis", Pull: atlantisOpened},
		},
		{
			name: "atlantis pull_request closed", fixture: "github/pull_request.closed.json", event: "pull_request",
			body: fixture("github/pull_request.closed.json"),
			want: &vcs.Event{Kind: vcs.EventPullClosed, DeliveryID: deliveryID, Repo: atlantisTests, User: "runatlantis", Pull: atlantisClosed},
		},
		{
			name: "atlantis issue_comment on a pull request", fixture: "github/issue_comment.created.json", event: "issue_comment",
			body: func(t *testing.T) []byte { return commentFixture(t, "atlantis plan -d \"dir 1\"\n-- -var x=1") },
			want: &vcs.Event{
				Kind: vcs.EventComment, DeliveryID: deliveryID, Repo: atlantisTests, User: "runatlantis",
				Comment: "atlantis plan -d \"dir 1\"\n-- -var x=1", CommentID: "396926483",
				Pull: atoll.Pull{Repo: "runatlantis/atlantis-tests", Number: 1, Title: "Add new project layouts", Author: "runatlantis",
					URL: "https://github.com/runatlantis/atlantis-tests/pull/1"},
			},
		},
		{
			name: "octokit pull_request synchronize", fixture: "github/octokit/pull_request.synchronize.json", event: "pull_request",
			body: fixture("github/octokit/pull_request.synchronize.json"),
			want: &vcs.Event{Kind: vcs.EventPullSynchronize, DeliveryID: deliveryID, Repo: codertocat, User: "Codertocat", Pull: codertocatPull},
		},
		{
			name: "octokit pull_request reopened", fixture: "github/octokit/pull_request.reopened.json", event: "pull_request",
			body: fixture("github/octokit/pull_request.reopened.json"),
			want: &vcs.Event{Kind: vcs.EventPullReopened, DeliveryID: deliveryID, Repo: codertocat, User: "Codertocat", Pull: codertocatPull},
		},
		{
			name: "octokit pull_request closed unmerged", fixture: "github/octokit/pull_request.closed.json", event: "pull_request",
			body: fixture("github/octokit/pull_request.closed.json"),
			want: &vcs.Event{Kind: vcs.EventPullClosed, DeliveryID: deliveryID, Repo: codertocat, User: "Codertocat", Pull: closed},
		},
		{
			// No upstream example is merged; flip the flag on the closed one.
			name: "octokit pull_request closed merged", fixture: "github/octokit/pull_request.closed.json", event: "pull_request",
			body: func(t *testing.T) []byte {
				return editJSON(t, readFixture(t, "github/octokit/pull_request.closed.json"), func(m map[string]any) {
					m["pull_request"].(map[string]any)["merged"] = true
				})
			},
			want: &vcs.Event{Kind: vcs.EventPullClosed, DeliveryID: deliveryID, Repo: codertocat, User: "Codertocat", Pull: merged, Merged: true},
		},
		{
			// A draft marked ready autoplans, as a fresh open does in Atlantis.
			name: "octokit pull_request ready_for_review", fixture: "github/octokit/pull_request.ready_for_review.json", event: "pull_request",
			body: fixture("github/octokit/pull_request.ready_for_review.json"),
			want: &vcs.Event{Kind: vcs.EventPullReady, DeliveryID: deliveryID, Repo: codertocat, User: "Codertocat", Pull: updated},
		},
		{
			name: "octokit pull_request converted_to_draft is ignored", fixture: "github/octokit/pull_request.converted_to_draft.json", event: "pull_request",
			body: fixture("github/octokit/pull_request.converted_to_draft.json"),
		},
		{
			// No upstream example opens a draft; set the flag on the opened one.
			name: "atlantis pull_request opened as a draft", fixture: "github/pull_request.opened.json", event: "pull_request",
			body: func(t *testing.T) []byte {
				return editJSON(t, readFixture(t, "github/pull_request.opened.json"), func(m map[string]any) {
					m["pull_request"].(map[string]any)["draft"] = true
				})
			},
			want: &vcs.Event{Kind: vcs.EventPullOpened, DeliveryID: deliveryID, Repo: atlantisTests, User: "runatlantis", Draft: true, Pull: atlantisOpened},
		},
		{
			name: "pull_request action labeled is ignored", fixture: "github/pull_request.opened.json", event: "pull_request",
			body: func(t *testing.T) []byte {
				return editJSON(t, readFixture(t, "github/pull_request.opened.json"), func(m map[string]any) { m["action"] = "labeled" })
			},
		},
		{
			name: "issue_comment edited is ignored", fixture: "github/issue_comment.created.json", event: "issue_comment",
			body: func(t *testing.T) []byte {
				return editJSON(t, commentFixture(t, "atlantis apply"), func(m map[string]any) { m["action"] = "edited" })
			},
		},
		{name: "octokit issue_comment on a plain issue", fixture: "github/octokit/issue_comment.created.json", event: "issue_comment", body: fixture("github/octokit/issue_comment.created.json")},
		{name: "octokit pull_request_review submitted", fixture: "github/octokit/pull_request_review.submitted.json", event: "pull_request_review", body: fixture("github/octokit/pull_request_review.submitted.json")},
		{name: "octokit check_run requested_action", fixture: "github/octokit/check_run.requested_action.json", event: "check_run", body: fixture("github/octokit/check_run.requested_action.json")},
		{name: "octokit check_suite requested", fixture: "github/octokit/check_suite.requested.json", event: "check_suite", body: fixture("github/octokit/check_suite.requested.json")},
		{name: "octokit check_suite rerequested", fixture: "github/octokit/check_suite.rerequested.json", event: "check_suite", body: fixture("github/octokit/check_suite.rerequested.json")},
		{name: "octokit check_suite completed", fixture: "github/octokit/check_suite.completed.json", event: "check_suite", body: fixture("github/octokit/check_suite.completed.json")},
		{
			name: "ping", event: "ping",
			body: func(*testing.T) []byte {
				return []byte(`{"zen":"Design for failure.","hook_id":12345678,"hook":{"type":"Repository","id":12345678,"events":["pull_request","issue_comment"]}}`)
			},
		},
		{
			// The payload of a pull_request, sent as another event: the
			// header decides, not the body.
			name: "pull_request payload under an unknown event", fixture: "github/pull_request.opened.json", event: "installation",
			body: fixture("github/pull_request.opened.json"),
		},
	}
}

func TestParseWebhookFixtures(t *testing.T) {
	p := tokenProvider(t)
	for _, tc := range webhookCases() {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body(t)
			got, err := p.ParseWebhook(webhookRequest(tc.event, body, sign(body, secret)), body)
			if err != nil {
				t.Fatalf("ParseWebhook: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseWebhook =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// Every webhook fixture in testdata must be covered by a case above.
func TestEveryWebhookFixtureHasACase(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range webhookCases() {
		covered[tc.fixture] = true
	}
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") || strings.HasPrefix(d.Name(), "api.") {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "testdata"+string(filepath.Separator)))
		if !covered[rel] {
			t.Errorf("fixture %s has no webhook case", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(covered) < 12 {
		t.Errorf("only %d fixtures covered", len(covered))
	}
}

func TestParseWebhookRejectsBadSignatures(t *testing.T) {
	p := tokenProvider(t)
	body := readFixture(t, "github/pull_request.opened.json")
	sha1Sig := func() string {
		m := hmac.New(sha1.New, []byte(secret))
		m.Write(body)
		return "sha1=" + hex.EncodeToString(m.Sum(nil))
	}()
	valid := sign(body, secret)
	flipped := []byte(valid)
	if flipped[len(flipped)-1] == '0' {
		flipped[len(flipped)-1] = '1'
	} else {
		flipped[len(flipped)-1] = '0'
	}
	cases := []struct{ name, sig string }{
		{"missing", ""},
		{"wrong secret", sign(body, "not the secret")},
		{"one hex digit changed", string(flipped)},
		{"sha1 prefix with valid sha1 mac", sha1Sig},
		{"sha1 prefix with the sha256 mac", "sha1=" + strings.TrimPrefix(valid, "sha256=")},
		{"no prefix", strings.TrimPrefix(valid, "sha256=")},
		{"signature of a different body", sign(append(append([]byte{}, body...), ' '), secret)},
		{"not hex", "sha256=zzzz"},
		{"truncated", valid[:len(valid)-2]},
		{"empty mac", "sha256="},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := p.ParseWebhook(webhookRequest("pull_request", body, tc.sig), body)
			if ev != nil || atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
				t.Fatalf("ParseWebhook = %v, %v; want EUNAUTHORIZED", ev, err)
			}
		})
	}

	t.Run("legacy X-Hub-Signature header alone", func(t *testing.T) {
		r := webhookRequest("pull_request", body, "")
		r.Header.Set("X-Hub-Signature", sha1Sig)
		if _, err := p.ParseWebhook(r, body); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
			t.Fatalf("err = %v; want EUNAUTHORIZED", err)
		}
	})

	t.Run("no secret configured", func(t *testing.T) {
		np, err := ghp.New(ghp.Config{Token: "ghp_secrettoken"})
		if err != nil {
			t.Fatal(err)
		}
		// Even a signature made with the empty key is refused.
		_, err = np.ParseWebhook(webhookRequest("pull_request", body, sign(body, "")), body)
		if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED || atoll.ErrorMessage(err) != "webhook secret not configured" {
			t.Fatalf("err = %v; want EUNAUTHORIZED webhook secret not configured", err)
		}
	})
}

func TestParseWebhookInvalidJSON(t *testing.T) {
	p := tokenProvider(t)
	cases := []struct{ event, body string }{
		{"pull_request", `{"action": "opened",`},
		{"pull_request", `not json`},
		{"pull_request", `{"action":"opened","pull_request":"nope"}`},
		{"pull_request", `{"action":"opened","number":1}`}, // no pull_request object
		{"issue_comment", `{"action": "created",`},
		{"issue_comment", ``},
		{"issue_comment", `{"action":"created","issue":{"number":"one"}}`},
	}
	for _, tc := range cases {
		body := []byte(tc.body)
		ev, err := p.ParseWebhook(webhookRequest(tc.event, body, sign(body, secret)), body)
		if ev != nil || atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("%s %q: ParseWebhook = %v, %v; want EINVALID", tc.event, body, ev, err)
		}
	}
	// Signature is checked before the body is looked at.
	body := []byte(`not json`)
	if _, err := p.ParseWebhook(webhookRequest("pull_request", body, sign(body, "wrong")), body); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Errorf("bad JSON with bad signature: err = %v; want EUNAUTHORIZED", err)
	}
}

// GitHub can deliver webhooks form-encoded; it signs the raw form body.
func TestParseWebhookFormEncoded(t *testing.T) {
	p := tokenProvider(t)
	payload := readFixture(t, "github/octokit/pull_request.synchronize.json")
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	r := webhookRequest("pull_request", body, sign(body, secret))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	ev, err := p.ParseWebhook(r, body)
	if err != nil {
		t.Fatal(err)
	}
	if ev == nil || ev.Kind != vcs.EventPullSynchronize || ev.Pull.HeadSHA != codertocatPull.HeadSHA {
		t.Fatalf("ParseWebhook = %+v", ev)
	}
	// A signature over the JSON alone does not authenticate the form body.
	if _, err := p.ParseWebhook(webhookRequest("pull_request", body, sign(payload, secret)), body); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("err = %v; want EUNAUTHORIZED", err)
	}
}

// Repo.Host is the configured host, not whatever the payload says.
func TestParseWebhookEnterpriseHost(t *testing.T) {
	p, err := ghp.New(ghp.Config{Hostname: "ghe.example.com", Token: "t", WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	body := readFixture(t, "github/pull_request.opened.json")
	ev, err := p.ParseWebhook(webhookRequest("pull_request", body, sign(body, secret)), body)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Repo.Host != "ghe.example.com" || ev.Repo.VCS != atoll.VCSGitHub {
		t.Fatalf("Repo = %+v", ev.Repo)
	}
}

// CheckWebhook refuses by the headers alone what ParseWebhook would refuse
// for its signature, so the server need not read such bodies.
func TestCheckWebhook(t *testing.T) {
	p := tokenProvider(t)
	body := []byte(`{}`)
	cases := []struct {
		name, sig string
		ok        bool
	}{
		{"well-formed (even if wrong)", sign([]byte("another body"), "wrong"), true},
		{"missing", "", false},
		{"sha1", "sha1=" + strings.Repeat("a", 40), false},
		{"no prefix", strings.Repeat("a", 64), false},
		{"not hex", "sha256=" + strings.Repeat("z", 64), false},
		{"short", "sha256=" + strings.Repeat("a", 62), false},
		{"long", "sha256=" + strings.Repeat("a", 66), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := p.CheckWebhook(webhookRequest("pull_request", body, tc.sig).Header)
			if tc.ok && err != nil {
				t.Fatalf("CheckWebhook = %v; want nil", err)
			}
			if !tc.ok && atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
				t.Fatalf("CheckWebhook = %v; want EUNAUTHORIZED", err)
			}
		})
	}
	np, err := ghp.New(ghp.Config{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := np.CheckWebhook(webhookRequest("pull_request", body, sign(body, "")).Header); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("without a secret: CheckWebhook = %v; want EUNAUTHORIZED", err)
	}
}

// ACME/INFRA and acme/infra are one GitHub repository, hence one identity.
func TestParseWebhookRepoNameCase(t *testing.T) {
	p := tokenProvider(t)
	var repos []atoll.Repo
	for _, owner := range []string{"ACME", "acme", "Acme"} {
		body := editJSON(t, readFixture(t, "github/pull_request.opened.json"), func(m map[string]any) {
			repo := m["repository"].(map[string]any)
			repo["owner"].(map[string]any)["login"] = owner
			repo["name"] = map[string]string{"ACME": "INFRA", "acme": "infra", "Acme": "Infra"}[owner]
		})
		ev, err := p.ParseWebhook(webhookRequest("pull_request", body, sign(body, secret)), body)
		if err != nil {
			t.Fatal(err)
		}
		repos = append(repos, ev.Repo)
		if ev.Pull.Repo != "acme/infra" {
			t.Errorf("%s: Pull.Repo = %q; want acme/infra", owner, ev.Pull.Repo)
		}
	}
	for _, r := range repos[1:] {
		if r.Owner != repos[0].Owner || r.Name != repos[0].Name || r.FullName() != "acme/infra" {
			t.Fatalf("repositories differ by case only but got %+v and %+v", repos[0], r)
		}
	}
}

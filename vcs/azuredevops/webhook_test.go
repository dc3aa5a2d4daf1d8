package azuredevops_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
)

const (
	hookUser = "azure-hook"
	hookPass = "hook-s3cret"

	hookHeadSHA = "53d54ac915144006c2c9e90d2c7d3880920db49c"
	hookBaseSHA = "a511f535b1ea495ee0c903badb68fbc83772c882"
	hookAuthor  = "fabrikamfiber4@hotmail.com"
)

func newHookProvider(t *testing.T, hostname string) *azuredevops.Provider {
	t.Helper()
	p, err := azuredevops.New(azuredevops.Config{
		Hostname:        hostname,
		Credential:      azuredevops.PAT{Token: "pat-secret"},
		WebhookUser:     hookUser,
		WebhookPassword: hookPass,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fixture decodes testdata/azuredevops/name, for editing. The samples are
// what the Test button sends, which is ignored: their repository id is
// replaced by another (sampleFixture keeps it) so that they read as real
// events of the fabrikam organization.
func fixture(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "azuredevops", name))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(sampleRepositoryID), []byte("5cd25e51-d014-56f3-983f-1573d8858180"))
	return decodeFixture(t, b)
}

// sampleRepositoryID is the repository of Microsoft's sample events.
const sampleRepositoryID = "4bc14d40-c903-45e2-872e-0462c7748079"

// sampleFixture decodes testdata/azuredevops/name as it is: the Test
// button's payload.
func sampleFixture(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "azuredevops", name))
	if err != nil {
		t.Fatal(err)
	}
	return decodeFixture(t, b)
}

func decodeFixture(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// set sets the value at a dotted path ("resource.comment.isDeleted"),
// creating objects on the way; a nil value deletes the key.
func set(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	if v == nil {
		delete(m, keys[len(keys)-1])
		return
	}
	m[keys[len(keys)-1]] = v
}

func get(m map[string]any, path string) any {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		m = m[k].(map[string]any)
	}
	return m[keys[len(keys)-1]]
}

// fresh makes a sample comment (both samples are edits) a new one.
func fresh(m map[string]any, comment string) map[string]any {
	set(m, comment+".lastContentUpdatedDate", get(m, comment+".publishedDate"))
	return m
}

func encode(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hookRequest(body []byte, user, pass string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/events", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	r.Header.Set("X-Vss-ActivityId", "0d1a3c5e-0000-0000-0000-000000000000")
	if user != "" || pass != "" {
		r.SetBasicAuth(user, pass)
	}
	return r
}

func parse(t *testing.T, p *azuredevops.Provider, m map[string]any) (*vcs.Event, error) {
	t.Helper()
	body := encode(t, m)
	return p.ParseWebhook(hookRequest(body, hookUser, hookPass), body)
}

// fabrikam is the repository every sample is about.
var fabrikam = atoll.Repo{
	VCS:      atoll.VCSAzureDevOps,
	Host:     "dev.azure.com",
	Owner:    "fabrikam/Fabrikam",
	Name:     "Fabrikam",
	CloneURL: "https://dev.azure.com/fabrikam/Fabrikam/_git/Fabrikam",
	HTMLURL:  "https://dev.azure.com/fabrikam/Fabrikam/_git/Fabrikam",
}

const pull1URL = "https://dev.azure.com/fabrikam/Fabrikam/_git/Fabrikam/pullrequest/1"

func fullPull(state string) atoll.Pull {
	return atoll.Pull{Repo: "fabrikam/Fabrikam/Fabrikam", Number: 1, Title: "my first pull request", Author: hookAuthor,
		HeadSHA: hookHeadSHA, HeadRef: "mytopic", BaseSHA: hookBaseSHA, BaseRef: "master", State: state, URL: pull1URL}
}

func TestParseWebhookSamples(t *testing.T) {
	p := newHookProvider(t, "")
	tests := []struct {
		name string
		m    map[string]any
		want *vcs.Event
	}{
		{"created", fixture(t, "pullrequest.created.json"), &vcs.Event{
			Kind: vcs.EventPullOpened, DeliveryID: "2ab4e3d3-b7a6-425e-92b1-5a9982c1269e",
			Repo: fabrikam, Pull: fullPull(atoll.PullOpen), User: hookAuthor}},
		{"updated to completed", fixture(t, "pullrequest.updated.json"), &vcs.Event{
			Kind: vcs.EventPullClosed, DeliveryID: "af07be1b-f3ad-44c8-a7f1-c4835f2df06b",
			Repo: fabrikam, Pull: fullPull(atoll.PullMerged), Merged: true, User: hookAuthor}},
		{"merged and completed", fixture(t, "pullrequest.merged.json"), &vcs.Event{
			Kind: vcs.EventPullClosed, DeliveryID: "6872ee8c-b333-4eff-bfb9-0d5274943566",
			Repo: fabrikam, Pull: fullPull(atoll.PullMerged), Merged: true, User: hookAuthor}},
		{"comment 2.0", fresh(fixture(t, "pullrequest-comment.v2.json"), "resource.comment"), &vcs.Event{
			Kind: vcs.EventComment, DeliveryID: "af07be1b-f3ad-44c8-a7f1-c4835f2df06b", Repo: fabrikam,
			Pull: atoll.Pull{Repo: "fabrikam/Fabrikam/Fabrikam", Number: 1, Title: "my first pull request", Author: hookAuthor, URL: pull1URL},
			User: hookAuthor, Comment: "This is my comment.", CommentID: "5/2"}},
		// 1.0 names the repository only in its message's link.
		{"comment 1.0", fresh(fixture(t, "pullrequest-comment.v1.json"), "resource"), &vcs.Event{
			Kind: vcs.EventComment, DeliveryID: "af07be1b-f3ad-44c8-a7f1-c4835f2df06b", Repo: fabrikam,
			Pull: atoll.Pull{Repo: "fabrikam/Fabrikam/Fabrikam", Number: 1, URL: pull1URL},
			User: hookAuthor, Comment: "This is my comment.", CommentID: "5/2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := parse(t, p, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev, tt.want) {
				t.Errorf("event\n got %+v\nwant %+v", ev, tt.want)
			}
		})
	}
}

// The comment samples, as they are, are edits: ignored.
func TestParseWebhookIgnoresSampleEdits(t *testing.T) {
	p := newHookProvider(t, "")
	for _, name := range []string{"pullrequest-comment.v1.json", "pullrequest-comment.v2.json"} {
		body, err := os.ReadFile(filepath.Join("testdata", "azuredevops", name))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := p.ParseWebhook(hookRequest(body, hookUser, hookPass), body)
		if ev != nil || err != nil {
			t.Errorf("%s: got (%+v, %v), want (nil, nil)", name, ev, err)
		}
	}
}

// activeUpdate is the updated sample as an update of an open pull request
// with message text.
func activeUpdate(t *testing.T, text string) map[string]any {
	m := fixture(t, "pullrequest.updated.json")
	set(m, "resource.status", "active")
	set(m, "resource.closedDate", nil)
	set(m, "message.text", text)
	return m
}

func TestParseWebhookPullUpdates(t *testing.T) {
	p := newHookProvider(t, "")
	const push = "Jamal Hartnett updated the source branch of pull request 1 (my first pull request) in Fabrikam\r\nhttps://dev.azure.com/fabrikam/Fabrikam/_git/Fabrikam/"
	tests := []struct {
		name   string
		m      map[string]any
		kind   string // "" for ignored
		merged bool
		draft  bool
		state  string
	}{
		{"abandoned", func() map[string]any {
			m := fixture(t, "pullrequest.updated.json")
			set(m, "resource.status", "abandoned")
			set(m, "message.text", "Jamal Hartnett abandoned pull request 1 (my first pull request) in Fabrikam")
			return m
		}(), vcs.EventPullClosed, false, false, atoll.PullClosed},
		{"new commits", activeUpdate(t, push), vcs.EventPullSynchronize, false, false, atoll.PullOpen},
		{"new commits on a draft", func() map[string]any {
			m := activeUpdate(t, push)
			set(m, "resource.isDraft", true)
			return m
		}(), vcs.EventPullSynchronize, false, true, atoll.PullOpen},
		{"reviewers", activeUpdate(t, "Jamal Hartnett changed the reviewer list of pull request 1 (my first pull request)"), "", false, false, ""},
		{"vote", activeUpdate(t, "Jamal Hartnett voted on pull request 1 (my first pull request)"), "", false, false, ""},
		{"approval", activeUpdate(t, "Jamal Hartnett approved pull request 1 (my first pull request)"), "", false, false, ""},
		// The title is the user's: it must not make a push read as a vote.
		{"title that reads as a vote", func() map[string]any {
			m := activeUpdate(t, "Jamal Hartnett updated the source branch of pull request 1 (voted on pull request) in Fabrikam")
			set(m, "resource.title", "voted on pull request")
			return m
		}(), vcs.EventPullSynchronize, false, false, atoll.PullOpen},
		{"draft published", activeUpdate(t, "Jamal Hartnett published pull request 1 (my first pull request) in Fabrikam"), vcs.EventPullReady, false, false, atoll.PullOpen},
		{"reactivated", activeUpdate(t, "Jamal Hartnett reactivated pull request 1 (my first pull request) in Fabrikam"), vcs.EventPullReopened, false, false, atoll.PullOpen},
		// An update Atoll cannot read plans again, as in Atlantis.
		{"unreadable update", activeUpdate(t, "Jamal Hartnett a mis à jour la branche source de la demande de tirage 1"), vcs.EventPullSynchronize, false, false, atoll.PullOpen},
		{"draft created", func() map[string]any {
			m := fixture(t, "pullrequest.created.json")
			set(m, "resource.isDraft", true)
			return m
		}(), vcs.EventPullOpened, false, true, atoll.PullOpen},
		// git.pullrequest.merged is "merge attempted": an open pull request
		// whose merge commit was computed.
		{"merge attempted", func() map[string]any {
			m := fixture(t, "pullrequest.merged.json")
			set(m, "resource.status", "active")
			return m
		}(), "", false, false, ""},
		{"other event type", func() map[string]any {
			m := fixture(t, "pullrequest.created.json")
			set(m, "eventType", "git.push")
			return m
		}(), "", false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := parse(t, p, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if tt.kind == "" {
				if ev != nil {
					t.Fatalf("got %+v, want the update ignored", ev)
				}
				return
			}
			if ev == nil {
				t.Fatalf("got nil, want %s", tt.kind)
			}
			if ev.Kind != tt.kind || ev.Merged != tt.merged || ev.Draft != tt.draft || ev.Pull.State != tt.state {
				t.Errorf("got kind %s merged %v draft %v state %s, want %s %v %v %s", ev.Kind, ev.Merged, ev.Draft, ev.Pull.State, tt.kind, tt.merged, tt.draft, tt.state)
			}
			if ev.Repo != fabrikam || ev.Pull.Number != 1 || ev.Pull.HeadSHA != hookHeadSHA {
				t.Errorf("repo %+v pull %+v", ev.Repo, ev.Pull)
			}
		})
	}
}

func TestParseWebhookCommentsIgnored(t *testing.T) {
	p := newHookProvider(t, "")
	v2 := func(edit func(m map[string]any)) map[string]any {
		m := fresh(fixture(t, "pullrequest-comment.v2.json"), "resource.comment")
		edit(m)
		return m
	}
	tests := map[string]map[string]any{
		"system": v2(func(m map[string]any) { set(m, "resource.comment.commentType", "system") }),
		"deleted": v2(func(m map[string]any) {
			set(m, "resource.comment.isDeleted", true)
		}),
		"edited": v2(func(m map[string]any) {
			set(m, "resource.comment.lastContentUpdatedDate", "2014-06-17T16:58:33.123889Z")
		}),
		"empty":      v2(func(m map[string]any) { set(m, "resource.comment.content", " ") }),
		"edited 1.0": fixture(t, "pullrequest-comment.v1.json"),
		"system 1.0": func() map[string]any {
			m := fresh(fixture(t, "pullrequest-comment.v1.json"), "resource")
			set(m, "resource.commentType", "system")
			return m
		}(),
	}
	for name, m := range tests {
		t.Run(name, func(t *testing.T) {
			ev, err := parse(t, p, m)
			if ev != nil || err != nil {
				t.Errorf("got (%+v, %v), want (nil, nil)", ev, err)
			}
		})
	}

	// A new comment's dates may differ by a moment: still new.
	m := v2(func(m map[string]any) {
		set(m, "resource.comment.lastContentUpdatedDate", "2014-06-17T16:55:47.1Z")
	})
	if ev, err := parse(t, p, m); err != nil || ev == nil || ev.Comment != "This is my comment." {
		t.Errorf("comment stamped 0.5s after publication: got (%+v, %v), want it read", ev, err)
	}
}

func TestParseWebhookInvalid(t *testing.T) {
	p := newHookProvider(t, "")
	edit := func(name string, f func(m map[string]any)) []byte {
		m := fixture(t, name)
		if strings.HasPrefix(name, "pullrequest-comment.v2") {
			fresh(m, "resource.comment")
		} else if strings.HasPrefix(name, "pullrequest-comment.v1") {
			fresh(m, "resource")
		}
		f(m)
		return encode(t, m)
	}
	const created = "pullrequest.created.json"
	tests := []struct {
		name string
		body []byte
		want string // in the message
	}{
		{"not JSON", []byte(`{"eventType": "git.pullrequest.created", `), "not a service hook payload"},
		{"no eventType", []byte(`{"id": "x"}`), "eventType"},
		{"no resource", edit(created, func(m map[string]any) { set(m, "resource", nil) }), "resource"},
		{"resource of the wrong type", edit(created, func(m map[string]any) { set(m, "resource", "a string") }), "resource"},
		{"no pull request id", edit(created, func(m map[string]any) { set(m, "resource.pullRequestId", nil) }), "resource.pullRequestId"},
		{"no repository", edit(created, func(m map[string]any) { set(m, "resource.repository", nil) }), "resource.repository"},
		{"no repository name", edit(created, func(m map[string]any) { set(m, "resource.repository.name", nil) }), "repository.name"},
		{"no project name", edit(created, func(m map[string]any) { set(m, "resource.repository.project.name", nil) }), "repository.project.name"},
		{"no repository URLs", edit(created, func(m map[string]any) {
			set(m, "resource.repository.url", nil)
			set(m, "resource.repository.remoteUrl", nil)
		}), "repository.url"},
		{"no head commit", edit(created, func(m map[string]any) { set(m, "resource.lastMergeSourceCommit", nil) }), "resource.lastMergeSourceCommit.commitId"},
		{"no source branch", edit(created, func(m map[string]any) { set(m, "resource.sourceRefName", nil) }), "resource.sourceRefName"},
		{"no author", edit(created, func(m map[string]any) { set(m, "resource.createdBy.uniqueName", nil) }), "resource.createdBy.uniqueName"},
		{"another host", edit(created, func(m map[string]any) {
			set(m, "resource.repository.remoteUrl", "https://evil.example.com/fabrikam/Fabrikam/_git/Fabrikam")
		}), "repository.remoteUrl is on evil.example.com, not on the configured Azure DevOps host dev.azure.com"},
		{"two organizations", edit(created, func(m map[string]any) {
			set(m, "resource.repository.remoteUrl", "https://dev.azure.com/contoso/Fabrikam/_git/Fabrikam")
		}), "repository.remoteUrl names organization"},
		{"no organization", edit(created, func(m map[string]any) {
			set(m, "resource.repository.url", "https://dev.azure.com/_apis/git/repositories/4bc14d40")
		}), "repository.url names no organization"},
		{"a slash in the project", edit(created, func(m map[string]any) { set(m, "resource.repository.project.name", "a/b") }), "slash"},
		{"comment resource version 3.0", edit("pullrequest-comment.v2.json", func(m map[string]any) { set(m, "resourceVersion", "3.0") }), `resourceVersion "3.0"`},
		{"comment without pull request", edit("pullrequest-comment.v2.json", func(m map[string]any) { set(m, "resource.pullRequest", nil) }), "resource.pullRequest"},
		{"comment without self link", edit("pullrequest-comment.v2.json", func(m map[string]any) {
			set(m, "resource.comment._links.self", nil)
		}), "comment._links.self.href"},
		{"comment of another pull request", edit("pullrequest-comment.v2.json", func(m map[string]any) {
			set(m, "resource.pullRequest.pullRequestId", 2)
		}), "resource.pullRequest.pullRequestId"},
		{"comment without author", edit("pullrequest-comment.v2.json", func(m map[string]any) {
			set(m, "resource.comment.author.uniqueName", nil)
		}), "comment.author.uniqueName"},
		{"bad comment date", edit("pullrequest-comment.v2.json", func(m map[string]any) {
			set(m, "resource.comment.publishedDate", "yesterday")
		}), "comment.publishedDate"},
		{"1.0 comment without a link to its pull request", edit("pullrequest-comment.v1.json", func(m map[string]any) {
			set(m, "message", map[string]any{"text": "Jamal Hartnett has commented on a pull request"})
		}), "subscribe with resource version 2.0"},
		{"1.0 comment linking another host", edit("pullrequest-comment.v1.json", func(m map[string]any) {
			set(m, "message.markdown", "[commented](https://evil.example.com/fabrikam/Fabrikam/_git/Fabrikam/pullrequest/1)")
		}), "message link is on evil.example.com"},
		{"1.0 comment on another host", edit("pullrequest-comment.v1.json", func(m map[string]any) {
			set(m, "resource._links.self.href", "https://evil.example.com/fabrikam/_apis/git/repositories/4bc14d40/pullRequests/1/threads/5/comments/2")
		}), "comment._links.self.href is on evil.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := p.ParseWebhook(hookRequest(tt.body, hookUser, hookPass), tt.body)
			if ev != nil {
				t.Errorf("got event %+v", ev)
			}
			if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), tt.want) {
				t.Errorf("got %v, want EINVALID naming %q", err, tt.want)
			}
		})
	}
}

// On Azure DevOps Server the organization is the collection after the
// configured virtual directory.
func TestParseWebhookServer(t *testing.T) {
	p := newHookProvider(t, "https://tfs.example.com/tfs")
	m := fixture(t, "pullrequest.created.json")
	set(m, "resource.repository.url", "https://tfs.example.com/tfs/DefaultCollection/6ce954b1/_apis/git/repositories/4bc14d40")
	set(m, "resource.repository.remoteUrl", "https://tfs.example.com/tfs/DefaultCollection/Fabrikam/_git/Fabrikam")
	set(m, "resourceContainers.collection.baseUrl", "https://tfs.example.com/tfs/DefaultCollection/")
	ev, err := parse(t, p, m)
	if err != nil {
		t.Fatal(err)
	}
	want := atoll.Repo{VCS: atoll.VCSAzureDevOps, Host: "tfs.example.com/tfs", Owner: "defaultcollection/Fabrikam", Name: "Fabrikam",
		CloneURL: "https://tfs.example.com/tfs/defaultcollection/Fabrikam/_git/Fabrikam",
		HTMLURL:  "https://tfs.example.com/tfs/defaultcollection/Fabrikam/_git/Fabrikam"}
	if ev.Repo != want || ev.Pull.URL != want.HTMLURL+"/pullrequest/1" {
		t.Errorf("got repo %+v url %s, want %+v", ev.Repo, ev.Pull.URL, want)
	}

	// Outside the virtual directory, or from Azure DevOps Services (the
	// samples as they are): refused. ORG.visualstudio.com is only
	// dev.azure.com's.
	outside := fixture(t, "pullrequest.created.json")
	set(outside, "resource.repository.url", "https://tfs.example.com/other/DefaultCollection/_apis/git/repositories/4bc14d40")
	set(outside, "resource.repository.remoteUrl", nil)
	for name, m := range map[string]map[string]any{
		"outside the virtual directory": outside,
		"dev.azure.com":                 fixture(t, "pullrequest.created.json"),
		"visualstudio.com":              fresh(fixture(t, "pullrequest-comment.v2.json"), "resource.comment"),
	} {
		if ev, err := parse(t, p, m); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("%s: got (%+v, %v), want EINVALID", name, ev, err)
		}
	}
}

func TestWebhookAuth(t *testing.T) {
	p := newHookProvider(t, "")
	body := encode(t, fixture(t, "pullrequest.created.json"))
	tests := []struct {
		name     string
		auth     string // Authorization header
		accepted bool
	}{
		{"right credentials", basic(hookUser, hookPass), true},
		{"no credentials", "", false},
		{"wrong password", basic(hookUser, "hook-s3cres"), false},
		{"wrong user", basic("someone", hookPass), false},
		{"both swapped", basic(hookPass, hookUser), false},
		{"password as a prefix", basic(hookUser, hookPass+"x"), false},
		{"bearer", "Bearer " + hookPass, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hookRequest(body, "", "")
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			checkErr := p.CheckWebhook(r.Header)
			ev, err := p.ParseWebhook(r, body)
			if tt.accepted {
				if checkErr != nil || err != nil || ev == nil {
					t.Fatalf("got check %v, parse (%v, %v), want the event", checkErr, ev, err)
				}
				return
			}
			for _, err := range []error{checkErr, err} {
				if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED || atoll.ErrorMessage(err) != "Azure DevOps webhook: wrong or missing basic auth credentials." {
					t.Errorf("got %v, want EUNAUTHORIZED", err)
				}
				if strings.Contains(atoll.ErrorMessage(err), hookPass) {
					t.Errorf("message shows the password: %v", err)
				}
			}
			if ev != nil {
				t.Errorf("got event %+v", ev)
			}
		})
	}
}

func basic(user, pass string) string {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}

// Without webhook credentials nothing is accepted, not even a delivery
// without any (which would otherwise match the empty configuration).
func TestWebhookAuthUnconfigured(t *testing.T) {
	p, err := azuredevops.New(azuredevops.Config{Credential: azuredevops.PAT{Token: "pat-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	body := encode(t, fixture(t, "pullrequest.created.json"))
	for _, r := range []*http.Request{hookRequest(body, "", ""), hookRequest(body, hookUser, hookPass)} {
		checkErr := p.CheckWebhook(r.Header)
		ev, err := p.ParseWebhook(r, body)
		for _, err := range []error{checkErr, err} {
			if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED || !strings.Contains(atoll.ErrorMessage(err), "--azuredevops-webhook-user") {
				t.Errorf("got %v, want EUNAUTHORIZED naming the flags", err)
			}
		}
		if ev != nil {
			t.Errorf("got event %+v", ev)
		}
	}
}

// A 1.0 comment event of today's dev.azure.com links to its pull request
// with the project in the path (here with a space, escaped).
func TestParseWebhookComment10ProjectLink(t *testing.T) {
	p := newHookProvider(t, "")
	m := fresh(fixture(t, "pullrequest-comment.v1.json"), "resource")
	set(m, "resourceVersion", "1.0-preview.1")
	set(m, "resource._links.self.href", "https://dev.azure.com/Fabrikam/6ce954b1/_apis/git/repositories/4bc14d40/pullRequests/7/threads/12/comments/1")
	set(m, "message", map[string]any{
		"text":     "Jamal Hartnett has commented on a pull request",
		"markdown": "Jamal Hartnett has [commented](https://dev.azure.com/Fabrikam/Fabrikam%20Fiber/_git/infra/pullrequest/7?discussionId=12) on a pull request",
	})
	ev, err := parse(t, p, m)
	if err != nil {
		t.Fatal(err)
	}
	want := atoll.Repo{VCS: atoll.VCSAzureDevOps, Host: "dev.azure.com", Owner: "fabrikam/Fabrikam Fiber", Name: "infra",
		CloneURL: "https://dev.azure.com/fabrikam/Fabrikam%20Fiber/_git/infra",
		HTMLURL:  "https://dev.azure.com/fabrikam/Fabrikam%20Fiber/_git/infra"}
	if ev.Repo != want || ev.Pull.Number != 7 || ev.CommentID != "12/1" || ev.Pull.URL != want.HTMLURL+"/pullrequest/7" {
		t.Errorf("got %+v, want repo %+v, pull 7, comment 12/1", ev, want)
	}

	// A link to another pull request does not count.
	set(m, "message.markdown", "[commented](https://dev.azure.com/fabrikam/Fabrikam/_git/infra/pullrequest/8)")
	if _, err := parse(t, p, m); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("link to pull request 8: got %v, want EINVALID", err)
	}
}

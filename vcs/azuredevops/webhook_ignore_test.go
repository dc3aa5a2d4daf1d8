package azuredevops_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops"
)

// syncBuffer is a log sink for a provider's logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines are the logged records whose msg contains msg.
func (b *syncBuffer) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m, _ := rec["msg"].(string); strings.Contains(m, msg) {
			out = append(out, rec)
		}
	}
	return out
}

// newLoggedProvider is newHookProvider with its log in a buffer and, on a
// Server, the notification URLs it is told of.
func newLoggedProvider(t *testing.T, hostname string, notify ...string) (*azuredevops.Provider, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	p, err := azuredevops.New(azuredevops.Config{
		Hostname:         hostname,
		NotificationURLs: notify,
		Credential:       azuredevops.PAT{Token: "pat-secret"},
		WebhookUser:      hookUser,
		WebhookPassword:  hookPass,
		Logger:           slog.New(slog.NewJSONHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, logs
}

const ignoredMsg = "Azure DevOps webhook ignored"

// The Test button of a subscription sends Microsoft's sample of its event
// type (the files under testdata/azuredevops, as they are): it is answered
// as ignored, on Services and on a Server, whose host the sample never
// names; the reason is logged once. Wrong credentials are still refused:
// checking them is what the button is for.
func TestParseWebhookTestNotification(t *testing.T) {
	samples := []string{"pullrequest.created.json", "pullrequest.updated.json", "pullrequest.merged.json",
		"pullrequest-comment.v1.json", "pullrequest-comment.v2.json"}
	for _, host := range []string{"", "https://tfs.example.com/tfs"} {
		p, logs := newLoggedProvider(t, host)
		for _, name := range samples {
			m := sampleFixture(t, name)
			// The comment samples are edits, ignored as such: made new,
			// they are ignored as samples still.
			if strings.HasPrefix(name, "pullrequest-comment.v2") {
				fresh(m, "resource.comment")
			} else if strings.HasPrefix(name, "pullrequest-comment") {
				fresh(m, "resource")
			}
			ev, err := parse(t, p, m)
			if ev != nil || err != nil {
				t.Errorf("%s on %q: got (%+v, %v), want ignored", name, host, ev, err)
			}
			body := encode(t, m)
			if _, err := p.ParseWebhook(hookRequest(body, hookUser, "wrong"), body); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
				t.Errorf("%s on %q with a wrong password: got %v, want EUNAUTHORIZED", name, host, err)
			}
		}
		recs := logs.lines(t, ignoredMsg)
		if len(recs) != 1 || !strings.Contains(recs[0]["reason"].(string), "test notification") {
			t.Errorf("on %q: logged %v, want one line about a test notification", host, recs)
		}
	}
}

// A real repository of an organization named fabrikam is not the sample.
func TestParseWebhookFabrikamIsNotSample(t *testing.T) {
	p, _ := newLoggedProvider(t, "")
	ev, err := parse(t, p, fixture(t, "pullrequest.created.json"))
	if err != nil || ev == nil || ev.Repo.FullName() != "fabrikam/Fabrikam/Fabrikam" {
		t.Fatalf("got (%+v, %v), want fabrikam's event", ev, err)
	}
}

// A comment event of resource version 2.0 for a deleted comment may come
// without its pull request: it is ignored, not refused. A new comment
// without its pull request is still refused: it may be a command.
func TestParseWebhookDeletedCommentWithoutPull(t *testing.T) {
	p, logs := newLoggedProvider(t, "")
	m := fresh(fixture(t, "pullrequest-comment.v2.json"), "resource.comment")
	set(m, "resource.pullRequest", nil)
	set(m, "resource.comment.isDeleted", true)
	if ev, err := parse(t, p, m); ev != nil || err != nil {
		t.Errorf("deleted: got (%+v, %v), want ignored", ev, err)
	}
	if recs := logs.lines(t, ignoredMsg); len(recs) != 1 || !strings.Contains(recs[0]["reason"].(string), "deleted") {
		t.Errorf("logged %v, want one line about a deletion", recs)
	}
	set(m, "resource.comment.isDeleted", false)
	if _, err := parse(t, p, m); atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), "resource.pullRequest") {
		t.Errorf("new: got %v, want EINVALID naming resource.pullRequest", err)
	}
}

// Each reason is logged once (within the hour), whatever the number of
// deliveries; another reason gets its own line.
func TestParseWebhookIgnoredLoggedOncePerReason(t *testing.T) {
	p, logs := newLoggedProvider(t, "")
	vote := activeUpdate(t, "Jamal Hartnett voted on pull request 1 (my first pull request) in Fabrikam")
	for i := 0; i < 3; i++ {
		if ev, err := parse(t, p, vote); ev != nil || err != nil {
			t.Fatalf("vote: got (%+v, %v)", ev, err)
		}
	}
	push := map[string]any{"id": "p1", "eventType": "git.push", "resourceVersion": "1.0", "resource": map[string]any{}}
	for i := 0; i < 2; i++ {
		if ev, err := parse(t, p, push); ev != nil || err != nil {
			t.Fatalf("push: got (%+v, %v)", ev, err)
		}
	}
	recs := logs.lines(t, ignoredMsg)
	if len(recs) != 2 || !strings.Contains(recs[0]["reason"].(string), "touches no code") ||
		!strings.Contains(recs[1]["reason"].(string), "event type") || recs[1]["event_type"] != "git.push" {
		t.Errorf("logged %v, want one line per reason", recs)
	}
}

// An Azure DevOps Server writes its public URL into payloads, which may not
// be the name Atoll reaches it by. Named with NotificationURLs, that URL is
// read as the configured host (where Atoll clones and calls); not named, it
// is refused with the flag to set.
func TestParseWebhookServerNotificationURL(t *testing.T) {
	m := fixture(t, "pullrequest.created.json")
	set(m, "resource.repository.url", "http://tfs01:8080/tfs/DefaultCollection/6ce954b1/_apis/git/repositories/5cd25e51")
	set(m, "resource.repository.remoteUrl", "http://TFS01:8080/tfs/DefaultCollection/Fabrikam/_git/Fabrikam")
	set(m, "resourceContainers.collection.baseUrl", "http://tfs01:8080/tfs/DefaultCollection/")

	p, _ := newLoggedProvider(t, "tfs.example.com/tfs")
	_, err := parse(t, p, m)
	if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), "--azuredevops-notification-url http://tfs01:8080") {
		t.Fatalf("without the flag: got %v, want EINVALID naming the flag", err)
	}

	p, _ = newLoggedProvider(t, "tfs.example.com/tfs", "http://tfs01:8080/tfs/")
	ev, err := parse(t, p, m)
	if err != nil {
		t.Fatal(err)
	}
	want := atoll.Repo{VCS: atoll.VCSAzureDevOps, Host: "tfs.example.com/tfs", Owner: "defaultcollection/Fabrikam", Name: "Fabrikam",
		CloneURL: "https://tfs.example.com/tfs/defaultcollection/Fabrikam/_git/Fabrikam",
		HTMLURL:  "https://tfs.example.com/tfs/defaultcollection/Fabrikam/_git/Fabrikam"}
	if ev.Repo != want {
		t.Errorf("got %+v, want %+v", ev.Repo, want)
	}
	// Both names are accepted in one payload; any third host is not, nor
	// another virtual directory on the notification host.
	set(m, "resource.repository.remoteUrl", "https://tfs.example.com/tfs/DefaultCollection/Fabrikam/_git/Fabrikam")
	if _, err := parse(t, p, m); err != nil {
		t.Errorf("both names: %v", err)
	}
	set(m, "resource.repository.remoteUrl", "https://evil.example.com/tfs/DefaultCollection/Fabrikam/_git/Fabrikam")
	if _, err := parse(t, p, m); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("a third host: got %v, want EINVALID", err)
	}
	set(m, "resource.repository.remoteUrl", "http://tfs01:8080/other/DefaultCollection/Fabrikam/_git/Fabrikam")
	if _, err := parse(t, p, m); atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), "not under tfs01:8080/tfs") {
		t.Errorf("outside the virtual directory: got %v, want EINVALID", err)
	}
}

func TestNotificationURLsChecked(t *testing.T) {
	for _, tc := range []struct{ hostname, notify, want string }{
		{"", "http://tfs01:8080/tfs", "is for Azure DevOps Server"},
		{"tfs.example.com/tfs", "tfs01:8080/tfs", "not an http(s) URL"},
		{"tfs.example.com/tfs", "http://u:p@tfs01/tfs", "not an http(s) URL"},
		{"tfs.example.com/tfs", "https://TFS.example.com/tfs/", "is --azuredevops-hostname itself"},
	} {
		_, err := azuredevops.New(azuredevops.Config{Hostname: tc.hostname, NotificationURLs: []string{tc.notify},
			Credential: azuredevops.PAT{Token: "t"}})
		if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), tc.want) {
			t.Errorf("%q on %q: got %v, want %q", tc.notify, tc.hostname, err, tc.want)
		}
	}
}

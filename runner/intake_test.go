package runner_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/vcs"
)

func newRunner(t testing.TB) *runner.Runner {
	db := storetest.Open(t)
	// Not started: intake must work without workers and queue durably.
	return &runner.Runner{
		DB:     db,
		Config: runner.Config{Allowlist: runner.ParseAllowlist("github.com/acme/*")},
	}
}

func event(kind string, number int, comment string) *vcs.Event {
	return &vcs.Event{Kind: kind, DeliveryID: fmt.Sprintf("d-%s-%d-%s", kind, number, comment),
		Repo: atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra"},
		Pull: atoll.Pull{Number: number, HeadSHA: "abc", HeadRef: "feature", BaseRef: "main", Author: "alice"},
		User: "alice", Comment: comment}
}

func TestHandleEvent(t *testing.T) {
	cases := []struct {
		name    string
		ev      *vcs.Event
		queued  bool
		errCode string
	}{
		{"opened queues autoplan", event(vcs.EventPullOpened, 1, ""), true, ""},
		{"synchronize queues autoplan", event(vcs.EventPullSynchronize, 2, ""), true, ""},
		{"plan comment", event(vcs.EventComment, 3, "atlantis plan -d staging"), true, ""},
		{"bad command is queued to answer with usage", event(vcs.EventComment, 4, "atlantis plan -d ../x"), true, ""},
		{"ordinary comment ignored", event(vcs.EventComment, 5, "looks good to me"), false, ""},
		{"closed", event(vcs.EventPullClosed, 6, ""), true, ""},
		{"unknown kind ignored", event("label_added", 7, ""), false, ""},
		{"repo not allowed", func() *vcs.Event { e := event(vcs.EventPullOpened, 8, ""); e.Repo.Owner = "evil"; return e }(), false, atoll.EFORBIDDEN},
	}
	r := newRunner(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := r.DB.CountRequests(context.Background(), atoll.RequestQueued)
			id, err := r.Enqueue(context.Background(), c.ev)
			queued := id != 0
			if atoll.ErrorCode(err) != c.errCode || queued != c.queued {
				t.Fatalf("Enqueue = %v, %v; want queued %v, error code %q", queued, err, c.queued, c.errCode)
			}
			after, _ := r.DB.CountRequests(context.Background(), atoll.RequestQueued)
			if want := before + map[bool]int{true: 1}[c.queued]; after != want {
				t.Fatalf("queued requests %d -> %d, want %d", before, after, want)
			}
		})
	}
	// A redelivered webhook queues nothing new.
	if id, err := r.Enqueue(context.Background(), event(vcs.EventPullOpened, 1, "")); err != nil || id != 0 {
		t.Fatalf("redelivery = %v, %v; want ignored", id, err)
	}
}

func draft(e *vcs.Event) *vcs.Event { e.Draft = true; return e }

// Drafts are not autoplanned unless AllowDraftPRs, as with Atlantis's
// --allow-draft-prs; comments and closes of drafts are handled as usual.
func TestHandleEventDrafts(t *testing.T) {
	cases := []struct {
		name       string
		allowDraft bool
		ev         *vcs.Event
		queued     bool
	}{
		{"draft opened is not autoplanned", false, draft(event(vcs.EventPullOpened, 1, "")), false},
		{"draft reopened is not autoplanned", false, draft(event(vcs.EventPullReopened, 2, "")), false},
		{"draft synchronize is not autoplanned", false, draft(event(vcs.EventPullSynchronize, 3, "")), false},
		{"ready_for_review autoplans", false, event(vcs.EventPullReady, 4, ""), true},
		{"plan comment on a draft plans", false, draft(event(vcs.EventComment, 5, "atlantis plan")), true},
		{"draft closed still releases", false, draft(event(vcs.EventPullClosed, 6, "")), true},
		{"draft opened with --allow-draft-prs", true, draft(event(vcs.EventPullOpened, 7, "")), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRunner(t)
			r.AllowDraftPRs = c.allowDraft
			id, err := r.Enqueue(context.Background(), c.ev)
			queued := id != 0
			if err != nil || queued != c.queued {
				t.Fatalf("Enqueue = %v, %v; want queued %v", queued, err, c.queued)
			}
			n, err := r.DB.CountRequests(context.Background(), atoll.RequestQueued)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1}[c.queued]; n != want {
				t.Fatalf("queued requests = %d, want %d", n, want)
			}
		})
	}
}

func TestAllowlist(t *testing.T) {
	cases := []struct {
		list, host, owner, name string
		want                    bool
	}{
		{"*", "github.com", "a", "b", true},
		{"github.com/acme/*", "github.com", "acme", "infra", true},
		{"github.com/acme/*", "github.com", "acmex", "infra", false},
		{"github.com/acme/infra", "github.com", "acme", "infra", true},
		{"github.com/acme/infra", "github.com", "acme", "infra2", false},
		{"github.com/*", "github.com", "any", "repo", true},
		{"github.com/*", "ghe.corp", "any", "repo", false},
		{"ghe.corp/*/infra-*", "ghe.corp", "team", "infra-prod", true},
		{"ghe.corp/*/infra-*", "ghe.corp", "team", "app", false},
		{"GitHub.com/Acme/*", "github.com", "acme", "x", true},
		{"a/b/c, github.com/acme/*", "github.com", "acme", "x", true},
		{"", "github.com", "acme", "x", false},
	}
	for _, c := range cases {
		if got := runner.ParseAllowlist(c.list).Allows(c.host, c.owner, c.name); got != c.want {
			t.Errorf("%q allows %s/%s/%s = %v, want %v", c.list, c.host, c.owner, c.name, got, c.want)
		}
	}
}

// BenchmarkHandleEvent measures durable webhook intake: each call commits
// (fsync) a repo, pull, webhook record, request and audit event before it
// returns; concurrent callers share commits.
func BenchmarkHandleEvent(b *testing.B) {
	r := newRunner(b)
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Enqueue(context.Background(), event(vcs.EventPullOpened, int(n.Add(1)), "")); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A request remembers where it came from, for the audit events of its
// work: a pull request comment, the host's own event, or the address of the
// dashboard or API client that sent it.
func TestRequestSource(t *testing.T) {
	r := newRunner(t)
	ctx := context.Background()
	fromAPI := event(vcs.EventComment, 3, "atlantis unlock")
	fromAPI.DeliveryID, fromAPI.Source = "", "192.0.2.7"
	for _, c := range []struct {
		ev   *vcs.Event
		want string
	}{
		{event(vcs.EventComment, 1, "atlantis plan"), atoll.SourcePRComment},
		{event(vcs.EventPullOpened, 2, ""), atoll.SourceWebhook},
		{fromAPI, "192.0.2.7"},
	} {
		id, err := r.Enqueue(ctx, c.ev)
		if err != nil || id == 0 {
			t.Fatalf("Enqueue = %d, %v", id, err)
		}
		req, err := r.DB.Request(ctx, id)
		if err != nil || req.Source != c.want {
			t.Fatalf("request source = %+v, %v; want %q", req, err, c.want)
		}
	}
}

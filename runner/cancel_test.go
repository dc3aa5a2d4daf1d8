package runner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/vcs"
)

// A cancel comment cancels its pull request's queued requests when it
// arrives, not after them; the running request, other pull requests' and
// later requests are left alone.
func TestCancelQueuedRequests(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t)
	enqueue := func(ev *vcs.Event) int64 {
		t.Helper()
		id, err := r.Enqueue(ctx, ev)
		if err != nil || id == 0 {
			t.Fatalf("Enqueue(%s %q) = %d, %v", ev.Kind, ev.Comment, id, err)
		}
		return id
	}
	running := enqueue(event(vcs.EventComment, 1, "atlantis plan"))
	if q, err := r.DB.ClaimRequest(ctx, "n1"); err != nil || q == nil || q.ID != running {
		t.Fatalf("claim = %+v, %v; want request %d", q, err, running)
	}
	autoplan := enqueue(event(vcs.EventPullSynchronize, 1, ""))
	apply := enqueue(event(vcs.EventComment, 1, "atlantis apply -d x"))
	other := enqueue(event(vcs.EventComment, 2, "atlantis plan"))
	cancel := enqueue(event(vcs.EventComment, 1, "atlantis cancel"))
	later := enqueue(event(vcs.EventComment, 1, "atlantis plan -d y"))

	want := map[int64]string{running: atoll.RequestRunning, autoplan: atoll.RequestDone, apply: atoll.RequestDone,
		other: atoll.RequestQueued, cancel: atoll.RequestQueued, later: atoll.RequestQueued}
	for id, state := range want {
		q, err := r.DB.Request(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if q.State != state {
			t.Errorf("request %d (%s %q) is %s, want %s", id, q.Kind, q.Comment, q.State, state)
		}
		if canceled := state == atoll.RequestDone; canceled != strings.Contains(q.Error, "Canceled by a cancel comment") {
			t.Errorf("request %d error %q", id, q.Error)
		}
	}
}

// A cancel comment that --allow-commands does not allow cancels nothing.
func TestCancelNotAllowed(t *testing.T) {
	ctx := context.Background()
	r := newRunner(t)
	r.Parser = command.Parser{AllowCommands: []string{command.Plan, command.Apply, command.Unlock}}
	plan, err := r.Enqueue(ctx, event(vcs.EventComment, 1, "atlantis plan"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Enqueue(ctx, event(vcs.EventComment, 1, "atlantis cancel")); err != nil {
		t.Fatal(err)
	}
	if q, err := r.DB.Request(ctx, plan); err != nil || q.State != atoll.RequestQueued {
		t.Fatalf("plan request = %+v, %v; want it still queued", q, err)
	}
}

// --disable-autoplan: pull request events queue nothing, comments do.
func TestDisableAutoplan(t *testing.T) {
	r := newRunner(t)
	r.DisableAutoplan = true
	for _, kind := range []string{vcs.EventPullOpened, vcs.EventPullSynchronize, vcs.EventPullReopened, vcs.EventPullReady} {
		if id, err := r.Enqueue(context.Background(), event(kind, 1, "")); err != nil || id != 0 {
			t.Errorf("%s = %v, %v; want nothing queued", kind, id, err)
		}
	}
	if id, err := r.Enqueue(context.Background(), event(vcs.EventComment, 1, "atlantis plan")); err != nil || id == 0 {
		t.Errorf("plan comment = %v, %v; want queued", id, err)
	}
}

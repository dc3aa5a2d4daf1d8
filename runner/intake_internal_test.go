package runner

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/vcs"
)

// intakeLog is intake's store: it records what it is given.
type intakeLog struct{ got []atoll.Intake }

func (l *intakeLog) Intake(_ context.Context, in atoll.Intake) (bool, error) {
	in.Request.ID = int64(len(l.got) + 1)
	l.got = append(l.got, in)
	return true, nil
}

type allowAll struct{}

func (allowAll) intakeTeamAllows(context.Context, *vcs.Event, string) bool { return true }

// Intake needs the config, the parser, the store's Intake, an authoriser
// and the scheduler to wake: no provider, no worker. A comment addressed to
// Atoll is queued and wakes a worker; one that is not, and a repository
// outside the allowlist, queue nothing.
func TestIntakeQueuesRequests(t *testing.T) {
	store := &intakeLog{}
	s := &scheduler{wake: make(chan struct{}, 1)}
	it := intake{cfg: &Config{Allowlist: ParseAllowlist("github.com/acme/*")}, parser: &command.Parser{}, db: store, authz: allowAll{}, sched: s}
	ev := func(owner, comment string) *vcs.Event {
		return &vcs.Event{Kind: vcs.EventComment, Comment: comment, User: "alice",
			Repo: atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: owner, Name: "infra"}, Pull: atoll.Pull{Number: 1, HeadSHA: "abc"}}
	}
	id, err := it.enqueue(context.Background(), ev("acme", "atlantis plan -d app"))
	if err != nil || id != 1 {
		t.Fatalf("plan comment: id %d, err %v", id, err)
	}
	if r := store.got[0].Request; r.Kind != atoll.RequestComment || r.Comment != "atlantis plan -d app" || r.Source != atoll.SourcePRComment {
		t.Errorf("queued %+v", r)
	}
	select {
	case <-s.wake:
	default:
		t.Errorf("no worker woken")
	}
	if id, err := it.enqueue(context.Background(), ev("acme", "looks good to me")); id != 0 || err != nil {
		t.Errorf("a comment not for Atoll: id %d, err %v", id, err)
	}
	if _, err := it.enqueue(context.Background(), ev("other", "atlantis plan")); atoll.ErrorCode(err) != atoll.EFORBIDDEN {
		t.Errorf("a repository outside the allowlist: err %v", err)
	}
	if len(store.got) != 1 {
		t.Errorf("%d intakes stored, want 1", len(store.got))
	}
}

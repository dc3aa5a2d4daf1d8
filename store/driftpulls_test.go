package store_test

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store/storetest"
)

// A drift target (a pulls row of state drift, negative number) is no pull
// request: no list of pull requests shows it, whatever the filter.
func TestDriftTargetIsNoPull(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 7) // acme/infra #7, open
	repo := atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra"}
	req, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: repo, Branch: "main", User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	target, err := db.Pull(ctx, req.PullID)
	if err != nil || target.State != atoll.PullDrift || target.Number >= 0 {
		t.Fatalf("drift target = %+v, %v", target, err)
	}
	for _, pf := range []atoll.PullFilter{{}, {Repo: "acme/infra"}, {State: atoll.PullDrift}, {Repo: "acme/infra", State: atoll.PullDrift}} {
		pulls, err := db.Pulls(ctx, pf)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pulls {
			if p.ID == target.ID || p.State == atoll.PullDrift {
				t.Errorf("Pulls(%+v) lists the drift target %+v", pf, p)
			}
		}
		if pf.State == "" && (len(pulls) != 1 || pulls[0].ID != f.pullID) {
			t.Errorf("Pulls(%+v) = %v; want only pull #7", pf, pulls)
		}
	}
	for _, state := range []string{atoll.PullOpen, atoll.PullDrift} {
		pulls, n, err := db.NewestPulls(ctx, state, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pulls {
			if p.ID == target.ID {
				t.Errorf("NewestPulls(%s) lists the drift target", state)
			}
		}
		if state == atoll.PullDrift && n != 0 {
			t.Errorf("NewestPulls(drift) counts %d", n)
		}
	}
}

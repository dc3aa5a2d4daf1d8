package templates_test

import (
	"reflect"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// The drift page counts every project of its repository per state, and
// groups those of its state by repository and branch, in order.
func TestDriftPageCountsAndGroups(t *testing.T) {
	p := func(repo, branch, dir, state string) *atoll.DriftProject {
		return &atoll.DriftProject{Repo: repo, Branch: branch, Dir: dir, Workspace: "default", State: state}
	}
	d := templates.DriftPage{Projects: []*atoll.DriftProject{
		p("acme/a", "main", "x", atoll.DriftDrifted),
		p("acme/a", "main", "y", atoll.DriftInSync),
		p("acme/a", "release", "x", atoll.DriftDrifted),
		p("acme/b", "main", "z", atoll.DriftFailed),
	}}
	want := []templates.DriftCount{{atoll.DriftDrifted, 2}, {atoll.DriftFailed, 1}, {atoll.DriftInSync, 1}}
	if got := d.Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Counts = %v; want %v", got, want)
	}
	groups := func(d templates.DriftPage) (out [][3]any) {
		for _, g := range d.Groups() {
			out = append(out, [3]any{g.Repo, g.Branch, len(g.Projects)})
		}
		return out
	}
	if got, want := groups(d), [][3]any{{"acme/a", "main", 2}, {"acme/a", "release", 1}, {"acme/b", "main", 1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Groups = %v; want %v", got, want)
	}
	d.State = atoll.DriftDrifted
	if got, want := groups(d), [][3]any{{"acme/a", "main", 1}, {"acme/a", "release", 1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Groups(drifted) = %v; want %v", got, want)
	}
	if got := d.Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Counts with a state filter = %v; want every state's %v", got, want)
	}
	for state, label := range map[string]string{atoll.DriftInSync: "in sync", atoll.DriftDrifted: "drifted", atoll.DriftFailed: "check failed"} {
		if got := templates.DriftStateLabel(state); got != label {
			t.Errorf("DriftStateLabel(%s) = %q", state, got)
		}
	}
}

// A drift target's number is no pull request's: its label says drift.
func TestPullLabel(t *testing.T) {
	if got := templates.PullLabel("acme/infra", 7); got != "acme/infra#7" {
		t.Errorf("PullLabel(7) = %q", got)
	}
	if got := templates.PullLabel("acme/infra", -1); got != "acme/infra drift" {
		t.Errorf("PullLabel(-1) = %q", got)
	}
	if got := templates.PullPath("acme/infra", -1); got != "/drift?repo=acme%2Finfra" {
		t.Errorf("PullPath(-1) = %q", got)
	}
}

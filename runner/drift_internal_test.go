package runner

import (
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// A drift request's selection: names or dirs, or dirs in a workspace (the
// default one when not given); plan only is read back.
func TestDriftSelection(t *testing.T) {
	req := &atoll.Request{ID: 1, Comment: `{"projects":["net"],"paths":[{"dir":"./app/"},{"dir":"db","workspace":"prod"}],"plan_only":true}`}
	sel, err := driftSelection(req)
	if err != nil || !sel.PlanOnly {
		t.Fatalf("%+v, %v", sel, err)
	}
	for _, c := range []struct {
		p    repocfg.Project
		want bool
	}{
		{repocfg.Project{Name: "net", Dir: "network", Workspace: "default"}, true},
		{repocfg.Project{Dir: "net", Workspace: "prod"}, true},
		{repocfg.Project{Dir: "app", Workspace: "default"}, true},
		{repocfg.Project{Dir: "app", Workspace: "prod"}, false},
		{repocfg.Project{Dir: "db", Workspace: "prod"}, true},
		{repocfg.Project{Dir: "db", Workspace: "default"}, false},
		{repocfg.Project{Dir: "other", Workspace: "default"}, false},
	} {
		if got := driftSelects(sel, c.p); got != c.want {
			t.Errorf("selects(%+v) = %v, want %v", c.p, got, c.want)
		}
	}
	if sel, err := driftSelection(&atoll.Request{}); err != nil || sel.PlanOnly || len(sel.Projects)+len(sel.Paths) != 0 {
		t.Errorf("empty selection %+v, %v", sel, err)
	}
	if _, err := driftSelection(&atoll.Request{Comment: "{"}); err == nil {
		t.Error("a bad selection was read")
	}
}

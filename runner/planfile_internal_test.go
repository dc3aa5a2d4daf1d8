package runner

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
)

// A plan without a plan file is kept unless something must read the file:
// policy checks, or a drift check (which wins when both apply).
func TestNeedsPlanFile(t *testing.T) {
	j := &atoll.Job{Spec: atoll.JobSpec{Workflow: "scripted"}}
	for _, tc := range []struct {
		policies, drift bool
		want            string
	}{
		{false, false, ""},
		{true, false, `Policy checks need a plan file, and workflow "scripted" wrote none`},
		{false, true, `Drift detection needs a plan file, and workflow "scripted" wrote none`},
		{true, true, `Drift detection needs a plan file`},
	} {
		err := needsPlanFile(j, tc.policies, tc.drift)
		if tc.want == "" && err != nil || tc.want != "" && (atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), tc.want)) {
			t.Errorf("policies %v, drift %v: %v; want %q", tc.policies, tc.drift, err, tc.want)
		}
	}
	if err := needsPlanFile(&atoll.Job{}, true, false); !strings.Contains(atoll.ErrorMessage(err), `workflow "default"`) {
		t.Errorf("no workflow named: %v", err)
	}
}

package command_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/command"
)

// --disable-apply-all refuses an apply naming no project, directory or
// workspace, as Atlantis does; naming one still applies, and plan is
// untouched.
func TestDisableApplyAll(t *testing.T) {
	p := command.Parser{DisableApplyAll: true}
	for _, tc := range []struct {
		comment string
		refused bool
	}{
		{"atlantis apply", true},
		{"atlantis apply -- -lock-timeout=5m", true},
		{"atlantis apply --auto-merge-disabled", true},
		{"atlantis apply -p staging", false},
		{"atlantis apply -d staging", false},
		{"atlantis apply -w prod", false},
		{"atlantis plan", false},
	} {
		cmd, err := p.Parse(tc.comment)
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), "--disable-apply-all") {
				t.Errorf("%q: got %+v, %v; want refused naming --disable-apply-all", tc.comment, cmd, err)
			}
			continue
		}
		if err != nil || cmd == nil {
			t.Errorf("%q: got %v; want it parsed", tc.comment, err)
		}
	}
	if cmd, err := (command.Parser{}).Parse("atlantis apply"); err != nil || cmd == nil {
		t.Errorf("without the flag apply all is refused: %v", err)
	}
}

package runner

import (
	"testing"

	"github.com/atollhq/atoll/vcs"
)

func TestApplyStatus(t *testing.T) {
	tests := []struct {
		name                              string
		total, applied, upToDate, errored int
		state, desc                       string
	}{
		{"one of two applied", 2, 1, 0, 0, vcs.StatusPending, "1/2 projects applied."},
		{"nothing applied, one up to date", 3, 0, 1, 0, vcs.StatusPending, "0/3 projects applied (1 up to date)."},
		{"all applied", 2, 2, 0, 0, vcs.StatusSuccess, "2/2 projects applied successfully."},
		{"no changes anywhere", 2, 0, 2, 0, vcs.StatusSuccess, "2/2 projects up to date."},
		{"applied and up to date", 3, 2, 1, 0, vcs.StatusSuccess, "2/3 projects applied successfully (1 up to date)."},
		{"a failed apply wins", 3, 2, 0, 1, vcs.StatusFailure, "1/3 projects failed to apply."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, desc := applyStatus(tt.total, tt.applied, tt.upToDate, tt.errored)
			if state != tt.state || desc != tt.desc {
				t.Fatalf("applyStatus = %q, %q; want %q, %q", state, desc, tt.state, tt.desc)
			}
		})
	}
}

package runner

import (
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// TestNeedsLock checks which job kinds take their project's lock in each
// repo_locks mode, as Atlantis's project command runner does.
func TestNeedsLock(t *testing.T) {
	kinds := []string{atoll.JobPlan, atoll.JobApply, atoll.JobImport, atoll.JobStateRm}
	want := map[string][]bool{ // by mode, in the order of kinds
		"":                   {true, false, true, true}, // queued before modes: on_plan
		repocfg.LockOnPlan:   {true, false, true, true},
		repocfg.LockOnApply:  {false, true, true, true},
		repocfg.LockDisabled: {false, false, false, false},
	}
	for mode, w := range want {
		for i, kind := range kinds {
			j := &atoll.Job{Kind: kind, Spec: atoll.JobSpec{LockMode: mode}}
			if got := needsLock(j); got != w[i] {
				t.Errorf("mode %q %s: needsLock = %v, want %v", mode, kind, got, w[i])
			}
		}
	}
}

// TestLockModeFor checks that --disable-repo-locking wins over the
// project's mode.
func TestLockModeFor(t *testing.T) {
	for _, tt := range []struct {
		disable bool
		mode    string
		want    string
	}{
		{false, "", repocfg.LockOnPlan},
		{false, repocfg.LockOnApply, repocfg.LockOnApply},
		{true, repocfg.LockOnApply, repocfg.LockDisabled},
		{true, repocfg.LockOnPlan, repocfg.LockDisabled},
	} {
		r := &Runner{
			Config: Config{DisableRepoLocking: tt.disable},
		}
		if got := r.lockModeFor(repocfg.Project{RepoLocks: tt.mode}); got != tt.want {
			t.Errorf("disable %v mode %q: %q, want %q", tt.disable, tt.mode, got, tt.want)
		}
	}
}

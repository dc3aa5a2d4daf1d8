package runner

import (
	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// The repo_locks modes decide which commands take a project's lock, as in
// Atlantis: on_plan (the default) locks on plan and the apply needs the
// plan's lock; on_apply plans without taking or checking a lock and locks
// on apply; disabled never locks. Import and state rm lock unless disabled.
// A lock taken is held until merge, close or unlock in every mode.

// lockModeFor is the mode a job of project p is queued with:
// --disable-repo-locking disables locks for every repository.
func (r *Runner) lockModeFor(p repocfg.Project) string {
	if r.DisableRepoLocking {
		return repocfg.LockDisabled
	}
	if p.RepoLocks == "" {
		return repocfg.LockOnPlan
	}
	return p.RepoLocks
}

// lockMode is j's mode; jobs queued before modes existed locked on plan.
func lockMode(j *atoll.Job) string {
	if j.Spec.LockMode == "" {
		return repocfg.LockOnPlan
	}
	return j.Spec.LockMode
}

// needsLock reports whether j takes its project's lock before it runs.
func needsLock(j *atoll.Job) bool {
	if j.Spec.Drift {
		// A drift check never blocks a pull request, nor waits for one;
		// a reconcile's apply changes the project, under its lock.
		return j.Kind == atoll.JobApply
	}
	switch lockMode(j) {
	case repocfg.LockDisabled:
		return false
	case repocfg.LockOnApply:
		return j.Kind != atoll.JobPlan
	}
	return j.Kind != atoll.JobApply
}

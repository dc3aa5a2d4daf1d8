package runner

import (
	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/repocfg"
	"github.com/atollhq/atoll/store"
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
	switch lockMode(j) {
	case repocfg.LockDisabled:
		return false
	case repocfg.LockOnApply:
		return j.Kind != atoll.JobPlan
	}
	return j.Kind != atoll.JobApply
}

// insertPlan stores the plan of job j: a plan made under its lock is kept
// only while the lock is held; one made without (on_apply, disabled) is not
// tied to a lock.
func insertPlan(tx *store.Tx, j *atoll.Job, p *atoll.Plan) error {
	if needsLock(j) {
		return tx.InsertPlan(p)
	}
	return tx.InsertUnlockedPlan(p)
}

// markApplied marks apply job j's plan applied, once: unless locks are
// disabled, only while the pull request holds the project's lock (taken
// by the plan, or with on_apply by this apply).
func markApplied(tx *store.Tx, j *atoll.Job) error {
	if lockMode(j) == repocfg.LockDisabled {
		return tx.MarkUnlockedPlanApplied(j.Spec.PlanID)
	}
	return tx.MarkPlanApplied(j.Spec.PlanID)
}

package atoll

import (
	"context"
	"time"
)

// Lock is held by a pull request on a project (repo + dir + workspace + name)
// from its first plan until it is merged, closed or unlocked.
type Lock struct {
	ID        int64     `json:"id"`
	Repo      string    `json:"repo"`
	Pull      int       `json:"pull"`
	PullURL   string    `json:"pull_url"`
	Project   string    `json:"project"`
	Dir       string    `json:"dir"`
	Workspace string    `json:"workspace"`
	User      string    `json:"user"`
	CreatedAt time.Time `json:"created_at"`
	PullID    int64     `json:"-"`
}

// LockSelector picks the locks a release takes: set exactly one field.
type LockSelector struct {
	PullID int64 // every lock this pull request holds
	LockID int64 // this lock (ENOTFOUND when there is none)
	// ProjectID, with PullID, narrows it to the pull request's lock of this
	// project, if it holds it (releasing nothing otherwise).
	ProjectID int64
	// KeepPlans leaves the holder's pending plans: a drift reconcile's
	// lock, taken for its apply alone, whose plan still waits for its
	// approval after a refused apply.
	KeepPlans bool
}

// LockFilter selects locks; zero fields match anything.
type LockFilter struct {
	Repo string // owner/name
	Pull int
	User string
	// OlderThan keeps the locks taken before it.
	OlderThan time.Time
	// After (a lock id) and Limit page the list; Limit 0 means all.
	After int64
	Limit int
}

// LockService reads and releases locks (taking them is the runner's).
type LockService interface {
	Locks(ctx context.Context) ([]*Lock, error)
	FilteredLocks(ctx context.Context, f LockFilter) ([]*Lock, error)
	LockCount(ctx context.Context) (int, error)
	LocksByID(ctx context.Context, ids []int64) ([]*Lock, error)
	// NewestLocks returns up to limit locks, newest first, and how many
	// there are in all.
	NewestLocks(ctx context.Context, limit int) ([]*Lock, int, error)
	PullLocks(ctx context.Context, pullID int64) ([]*Lock, error)
	// ReleaseLock releases lock id (ENOTFOUND if not held), discarding its
	// plan, with its audit event; ReleaseLocksByID does so for every id
	// still held, in one transaction, and reports the others as missing.
	ReleaseLock(ctx context.Context, id int64, actor, source, reason string) ([]*Lock, error)
	ReleaseLocksByID(ctx context.Context, ids []int64, actor, source, reason string) (released []*Lock, missing []int64, err error)
	// TakeJobLocks takes every claimed lock or none (returning the
	// holders), recording each job whose lock was taken now.
	TakeJobLocks(ctx context.Context, pullID int64, user string, claims []LockClaim, takes []LockTake) (map[int64]*Lock, error)
	// ReleaseLocksWhere releases the selected locks with their audit event.
	ReleaseLocksWhere(ctx context.Context, sel LockSelector, actor, source, action, reason string) ([]*Lock, error)
}

// LockClaim is one project lock a request asks for.
type LockClaim struct {
	ProjectID int64
	// Taken is set by the store when the lock was taken now (the pull
	// request did not hold it already).
	Taken bool
}

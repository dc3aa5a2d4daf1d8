package store

import (
	"time"

	"github.com/atollhq/atoll"
)

// DB implements the root package's services: the web layer and the
// runner use them through these interfaces and never import this package.
var (
	_ atoll.Store               = (*DB)(nil)
	_ atoll.UserService         = (*DB)(nil)
	_ atoll.LockService         = (*DB)(nil)
	_ atoll.ApprovalService     = (*DB)(nil)
	_ atoll.FreezeService       = (*DB)(nil)
	_ atoll.PlanService         = (*DB)(nil)
	_ atoll.JobService          = (*DB)(nil)
	_ atoll.LogService          = (*DB)(nil)
	_ atoll.PullService         = (*DB)(nil)
	_ atoll.RepoService         = (*DB)(nil)
	_ atoll.AuditService        = (*DB)(nil)
	_ atoll.HealthService       = (*DB)(nil)
	_ atoll.RunnerStore         = (*DB)(nil)
	_ atoll.NotificationService = (*DB)(nil)
)

// Clock is the store's clock (Now, which tests set), as a method for the
// services' users.
func (db *DB) Clock() time.Time { return db.Now() }

package atoll

import "time"

// Store is every service the database provides to the web layer (and,
// with the outbox, RunnerStore to the runner), in one value: the store
// (store.DB) implements them all, and the handlers reach them as s.DB.X,
// so one field serves where one per service would only repeat the same
// value.
type Store interface {
	UserService
	LockService
	ApprovalService
	FreezeService
	PlanService
	JobService
	LogService
	PullService
	RepoService
	AuditService
	HealthService
	// DispatchService is worker pools' side of the store: the job page
	// names the worker that ran a job.
	DispatchService
	DriftService
	DriftScheduler
}

// HealthService reports whether the database serves reads and writes.
type HealthService interface {
	// Readable reports whether reads are served (a standby serves them
	// from its follower copy).
	Readable() bool
	// WriteHealth is nil while the database can be written, else the
	// error of the last failed write.
	WriteHealth() error
}

// RunnerStore is every service the runner uses: the web layer's and the
// notification outbox. The store (store.DB) implements it; the runner
// reaches the database only through it.
type RunnerStore interface {
	Store
	NotificationService
}

// Clock is the store's clock: the time it stamps its writes with (tests
// set it), which checks against stored times must use too.
type Clock interface {
	Clock() time.Time
}

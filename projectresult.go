package atoll

// ProjectResult is the outcome of one command on one project, as a pull
// request is told of it: what the job's execution returned (output, plan
// summary, policy results, error) and what the runner adds around it (the
// lock holder, links, the approval). It is plain data; only the reporter
// (runner/markdown) turns it into a comment.
type ProjectResult struct {
	Dir, Workspace, Project string // Project may be ""
	Command                 string // JobPlan or JobApply
	Output                  string // terraform output
	Summary                 *Summary
	HasChanges              bool
	Error                   string      // failure reason, "" on success
	LockedBy                *LockHolder // set when the plan could not take the lock
	JobURL                  string      // the job log on the Atoll server, may be ""
	// ApprovedBy names the plan's approval in Atoll for an apply: "alice"
	// or "alice: reason".
	ApprovedBy string
	// ApprovalURL, on a refused apply, links the page where the plan is
	// approved.
	ApprovalURL string
	// PlanDiscarded is set when an import or state rm discarded the
	// project's unapplied plan.
	PlanDiscarded bool
	// Policies are a plan's policy check results (--enable-policy-checks).
	Policies []PolicyCheck
	// MergedAgain, on a plan with the merge checkout strategy, says the
	// base branch moved since the project's previous plan on this pull
	// request: this one was merged onto the newer base.
	MergedAgain bool
	// LockURL, on a plan, is the page where the project's lock (and with
	// it the plan) can be deleted: Atlantis's "delete this plan and lock".
	LockURL string
}

// LockHolder is the pull request holding a project's lock.
type LockHolder struct {
	Pull int
	URL  string
	User string
}

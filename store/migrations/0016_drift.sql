-- Drift detection (docs/drift.md). A drift check's target is a pulls row
-- of state 'drift' with a negative number, one per repository and branch
-- (head_ref): its requests (kind 'drift'), plan jobs and plans are those
-- of any plan. drift_projects is each project's latest state at a branch;
-- since is when that state began.
CREATE TABLE drift_projects (
	project_id      INTEGER NOT NULL REFERENCES projects (id),
	branch          TEXT NOT NULL,
	state           TEXT NOT NULL,
	since           INTEGER NOT NULL,
	checked_at      INTEGER NOT NULL,
	job_id          INTEGER NOT NULL REFERENCES jobs (id),
	head_sha        TEXT NOT NULL DEFAULT '',
	to_add          INTEGER NOT NULL DEFAULT 0,
	to_change       INTEGER NOT NULL DEFAULT 0,
	to_destroy      INTEGER NOT NULL DEFAULT 0,
	to_import       INTEGER NOT NULL DEFAULT 0,
	to_forget       INTEGER NOT NULL DEFAULT 0,
	changed_outside INTEGER NOT NULL DEFAULT 0,
	error           TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (project_id, branch)
);
CREATE INDEX drift_projects_state ON drift_projects (state);
CREATE INDEX pulls_drift ON pulls (repo_id, head_ref) WHERE state = 'drift';

-- A repository branch's scheduled drift check, from the server-side repo
-- config: next_due_at is durable and replicated, so a restart or a
-- failover neither skips a due check nor runs it twice; it moves to the
-- schedule's next time after now in the transaction that queues the
-- check, so checks missed while no node was active run once.
CREATE TABLE drift_schedules (
	repo_id     INTEGER NOT NULL REFERENCES repos (id),
	branch      TEXT NOT NULL,
	schedule    TEXT NOT NULL,
	projects    TEXT NOT NULL DEFAULT '[]',
	next_due_at INTEGER NOT NULL,
	PRIMARY KEY (repo_id, branch)
);

-- Runs of Atlantis's drift remediation API (POST /api/drift/remediate),
-- kept for its history routes: result is the run as the API answers it.
CREATE TABLE drift_remediations (
	id           TEXT PRIMARY KEY,
	repo         TEXT NOT NULL,
	ref          TEXT NOT NULL,
	action       TEXT NOT NULL,
	status       TEXT NOT NULL,
	started_at   INTEGER NOT NULL,
	completed_at INTEGER NOT NULL DEFAULT 0,
	result       TEXT NOT NULL
);
CREATE INDEX drift_remediations_repo ON drift_remediations (repo, started_at);

-- Every project check, for the drift page's history: one row per check
-- job (a resumed request records it once).
CREATE TABLE drift_checks (
	id              INTEGER PRIMARY KEY,
	project_id      INTEGER NOT NULL REFERENCES projects (id),
	branch          TEXT NOT NULL,
	job_id          INTEGER NOT NULL UNIQUE REFERENCES jobs (id),
	state           TEXT NOT NULL,
	head_sha        TEXT NOT NULL DEFAULT '',
	to_add          INTEGER NOT NULL DEFAULT 0,
	to_change       INTEGER NOT NULL DEFAULT 0,
	to_destroy      INTEGER NOT NULL DEFAULT 0,
	changed_outside INTEGER NOT NULL DEFAULT 0,
	error           TEXT NOT NULL DEFAULT '',
	checked_at      INTEGER NOT NULL
);
CREATE INDEX drift_checks_project ON drift_checks (project_id, branch, id DESC);

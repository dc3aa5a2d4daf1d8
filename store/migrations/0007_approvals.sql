-- Plan approvals made in the dashboard or the API (the table "approvals"
-- holds vcs/local's pull request reviews). A decision is tied to the plan's
-- hash: a new plan needs a new approval. The newest decision of a plan is
-- the one that counts; an approval also ends at expires_at.
CREATE TABLE plan_approvals (
	id          INTEGER PRIMARY KEY,
	plan_id     INTEGER NOT NULL REFERENCES plans (id),
	plan_sha256 TEXT NOT NULL,
	decision    TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
	user        TEXT NOT NULL,
	reason      TEXT NOT NULL DEFAULT '',
	source      TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
);
CREATE INDEX plan_approvals_plan ON plan_approvals (plan_id, id);

-- Server-wide settings changed at run time, one JSON value per name (the
-- apply freeze is "freeze").
CREATE TABLE settings (
	name       TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Where an audited action came from: the client's IP address for the
-- dashboard and the API, "pr-comment" for a pull request comment.
ALTER TABLE events ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN source TEXT NOT NULL DEFAULT '';

-- The audit page filters by actor, action or repository, newest first.
CREATE INDEX events_actor ON events (actor, id);
CREATE INDEX events_action ON events (action, id);
CREATE INDEX events_repo ON events (repo, id);

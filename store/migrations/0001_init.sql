-- Times are INTEGER unix nanoseconds, UTC.
CREATE TABLE repos (
	id         INTEGER PRIMARY KEY,
	vcs        TEXT NOT NULL,
	host       TEXT NOT NULL,
	owner      TEXT NOT NULL,
	name       TEXT NOT NULL,
	clone_url  TEXT NOT NULL DEFAULT '',
	html_url   TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	UNIQUE (vcs, host, owner, name)
);

CREATE TABLE pulls (
	id         INTEGER PRIMARY KEY,
	repo_id    INTEGER NOT NULL REFERENCES repos (id),
	number     INTEGER NOT NULL,
	title      TEXT NOT NULL DEFAULT '',
	author     TEXT NOT NULL DEFAULT '',
	head_sha   TEXT NOT NULL DEFAULT '',
	head_ref   TEXT NOT NULL DEFAULT '',
	base_sha   TEXT NOT NULL DEFAULT '',
	base_ref   TEXT NOT NULL DEFAULT '',
	state      TEXT NOT NULL DEFAULT 'open',
	url        TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	UNIQUE (repo_id, number)
);

CREATE TABLE projects (
	id        INTEGER PRIMARY KEY,
	repo_id   INTEGER NOT NULL REFERENCES repos (id),
	name      TEXT NOT NULL DEFAULT '',
	dir       TEXT NOT NULL,
	workspace TEXT NOT NULL,
	UNIQUE (repo_id, name, dir, workspace)
);

-- Every accepted webhook, for the audit trail and duplicate-delivery checks.
CREATE TABLE webhooks (
	id          INTEGER PRIMARY KEY,
	vcs         TEXT NOT NULL,
	delivery_id TEXT NOT NULL DEFAULT '',
	kind        TEXT NOT NULL,
	repo_id     INTEGER REFERENCES repos (id),
	pull_number INTEGER NOT NULL DEFAULT 0,
	sender      TEXT NOT NULL DEFAULT '',
	received_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX webhooks_delivery ON webhooks (vcs, delivery_id) WHERE delivery_id <> '';

CREATE TABLE requests (
	id          INTEGER PRIMARY KEY,
	pull_id     INTEGER NOT NULL REFERENCES pulls (id),
	kind        TEXT NOT NULL,
	state       TEXT NOT NULL,
	comment     TEXT NOT NULL DEFAULT '',
	comment_id  TEXT NOT NULL DEFAULT '',
	user        TEXT NOT NULL DEFAULT '',
	head_sha    TEXT NOT NULL DEFAULT '',
	error       TEXT NOT NULL DEFAULT '',
	claimed_by  TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	started_at  INTEGER,
	finished_at INTEGER
);
CREATE INDEX requests_state ON requests (state, id);
CREATE INDEX requests_pull ON requests (pull_id, state);

CREATE TABLE jobs (
	id          INTEGER PRIMARY KEY,
	request_id  INTEGER REFERENCES requests (id),
	pull_id     INTEGER NOT NULL REFERENCES pulls (id),
	project_id  INTEGER NOT NULL REFERENCES projects (id),
	kind        TEXT NOT NULL,
	state       TEXT NOT NULL,
	head_sha    TEXT NOT NULL,
	user        TEXT NOT NULL DEFAULT '',
	spec        TEXT NOT NULL DEFAULT '{}',
	error       TEXT NOT NULL DEFAULT '',
	summary     TEXT,
	attempt     INTEGER NOT NULL DEFAULT 0,
	created_at  INTEGER NOT NULL,
	started_at  INTEGER,
	finished_at INTEGER
);
CREATE INDEX jobs_pull ON jobs (pull_id, id);
CREATE INDEX jobs_request ON jobs (request_id);
CREATE INDEX jobs_state ON jobs (state);

CREATE TABLE plans (
	id           INTEGER PRIMARY KEY,
	job_id       INTEGER NOT NULL UNIQUE REFERENCES jobs (id),
	pull_id      INTEGER NOT NULL REFERENCES pulls (id),
	project_id   INTEGER NOT NULL REFERENCES projects (id),
	head_sha     TEXT NOT NULL,
	file         BLOB NOT NULL,
	sha256       TEXT NOT NULL,
	show_json    BLOB NOT NULL,
	add_count    INTEGER NOT NULL,
	change_count INTEGER NOT NULL,
	destroy_count INTEGER NOT NULL,
	import_count INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	applied_at   INTEGER,
	discarded_at INTEGER
);
CREATE INDEX plans_pull_project ON plans (pull_id, project_id, id);

CREATE TABLE locks (
	id         INTEGER PRIMARY KEY,
	project_id INTEGER NOT NULL UNIQUE REFERENCES projects (id),
	pull_id    INTEGER NOT NULL REFERENCES pulls (id),
	user       TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
);

CREATE TABLE log_lines (
	job_id INTEGER NOT NULL REFERENCES jobs (id),
	seq    INTEGER NOT NULL,
	stream TEXT NOT NULL,
	time   INTEGER NOT NULL,
	text   TEXT NOT NULL,
	PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;

CREATE TABLE events (
	id     INTEGER PRIMARY KEY,
	time   INTEGER NOT NULL,
	actor  TEXT NOT NULL,
	action TEXT NOT NULL,
	repo   TEXT NOT NULL DEFAULT '',
	pull   INTEGER NOT NULL DEFAULT 0,
	detail TEXT NOT NULL DEFAULT ''
);

-- vcs/local keeps its pull request conversation and commit statuses here.
CREATE TABLE comments (
	id         INTEGER PRIMARY KEY,
	pull_id    INTEGER NOT NULL REFERENCES pulls (id),
	author     TEXT NOT NULL,
	body       TEXT NOT NULL,
	hidden     INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX comments_pull ON comments (pull_id, id);

CREATE TABLE statuses (
	id          INTEGER PRIMARY KEY,
	repo_id     INTEGER NOT NULL REFERENCES repos (id),
	sha         TEXT NOT NULL,
	context     TEXT NOT NULL,
	state       TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	target_url  TEXT NOT NULL DEFAULT '',
	updated_at  INTEGER NOT NULL,
	UNIQUE (repo_id, sha, context)
);

-- vcs/local: approvals recorded against a pull request.
CREATE TABLE approvals (
	pull_id    INTEGER NOT NULL REFERENCES pulls (id),
	user       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (pull_id, user)
);

-- Worker pools (docs/workers.md). A worker token authenticates the
-- `atoll worker` processes of one pool; only the SHA-256 of its secret is
-- kept.
CREATE TABLE worker_tokens (
	id          INTEGER PRIMARY KEY,
	name        TEXT NOT NULL,
	pool        TEXT NOT NULL,
	hash        BLOB NOT NULL UNIQUE,
	created_by  TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	revoked_by  TEXT NOT NULL DEFAULT '',
	revoked_at  INTEGER,
	seen_at     INTEGER,
	worker      TEXT NOT NULL DEFAULT '',
	version     TEXT NOT NULL DEFAULT ''
);

-- A job handed to a pool: one row per job, whose attempt grows when a
-- plan is dispatched again after its worker was lost. The claim's job
-- token is kept as its SHA-256; the lease is what a worker's heartbeats
-- extend and what a node that takes over trusts. log_acked is the last of
-- the worker's lines (its own numbering) acknowledged as stored.
-- claim_hash pins a dispatch to one claimant: the SHA-256 of a one-time
-- secret handed to the process started for it (a Kubernetes Job's pod);
-- pool polls never claim a pinned dispatch.
CREATE TABLE dispatches (
	job_id           INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
	pool             TEXT NOT NULL,
	attempt          INTEGER NOT NULL DEFAULT 1,
	state            TEXT NOT NULL,
	token_id         INTEGER REFERENCES worker_tokens (id),
	worker           TEXT NOT NULL DEFAULT '',
	job_token_hash   BLOB,
	lease_expires_at INTEGER,
	log_acked        INTEGER NOT NULL DEFAULT 0,
	applying         INTEGER NOT NULL DEFAULT 0,
	spec             TEXT NOT NULL,
	plan_sha256      TEXT NOT NULL DEFAULT '',
	claim_hash       BLOB,
	result           TEXT,
	created_at       INTEGER NOT NULL,
	claimed_at       INTEGER,
	finished_at      INTEGER
);
CREATE INDEX dispatches_queue ON dispatches (pool, state, created_at);
CREATE UNIQUE INDEX dispatches_claim ON dispatches (claim_hash) WHERE claim_hash IS NOT NULL;

-- The outbox of apply notifications (--webhooks-config): one row per
-- destination an apply's result goes to, written in the transaction that
-- records the apply job's final state, so that a notification is never lost
-- with the node that ran the apply. dest is the index of the destination in
-- the webhooks list, kind its kind ("http" or "slack"): the URL, channel and
-- credentials stay in the configuration, never here. A row is pending until
-- sent_at or failed_at is set.
CREATE TABLE notifications (
	id              INTEGER PRIMARY KEY,
	job_id          INTEGER NOT NULL,
	dest            INTEGER NOT NULL,
	kind            TEXT NOT NULL,
	payload         TEXT NOT NULL,
	attempts        INTEGER NOT NULL DEFAULT 0,
	created_at      INTEGER NOT NULL,
	next_attempt_at INTEGER NOT NULL,
	sent_at         INTEGER,
	failed_at       INTEGER,
	last_error      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX notifications_pending ON notifications (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;

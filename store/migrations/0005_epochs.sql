-- Each promotion of a node to active, in lease-generation order: the
-- epoch is the fencing token, and the history says which node was active
-- when.
CREATE TABLE epochs (
	epoch         INTEGER PRIMARY KEY,
	node          TEXT NOT NULL,
	advertise_url TEXT NOT NULL DEFAULT '',
	started_at    INTEGER NOT NULL
);

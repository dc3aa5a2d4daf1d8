-- Who may sign in (issue 7). Passwords are bcrypt hashes; sessions and API
-- tokens are stored only as SHA-256 hashes of random 32-byte secrets, so the
-- database (and its replica) never holds anything that signs in.
CREATE TABLE users (
	id            INTEGER PRIMARY KEY,
	name          TEXT NOT NULL UNIQUE,
	role          TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
	source        TEXT NOT NULL CHECK (source IN ('local', 'oidc')),
	password_hash TEXT NOT NULL DEFAULT '',
	-- issuer and subject of an OIDC user, joined by a space ('' for local users)
	oidc_subject  TEXT NOT NULL DEFAULT '',
	disabled      INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX users_oidc_subject ON users (oidc_subject) WHERE oidc_subject != '';

CREATE TABLE sessions (
	hash         BLOB PRIMARY KEY,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_tokens (
	id           INTEGER PRIMARY KEY,
	hash         BLOB NOT NULL UNIQUE,
	user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

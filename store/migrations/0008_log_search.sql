-- Full-text search over job logs (store/search.go).
--
-- log_search is a contentless FTS5 index: the text stays only in log_lines,
-- the index holds just the tokens. Its rowid encodes the line's key:
-- job_id * 2^32 + seq (log_lines is WITHOUT ROWID, so an external-content
-- table cannot point at it). contentless_delete lets a line's tokens be
-- removed by rowid when retention prunes it.
CREATE VIRTUAL TABLE log_search USING fts5 (
	text,
	content = '',
	contentless_delete = 1,
	tokenize = 'unicode61 remove_diacritics 2'
);

-- Triggers, not the Go write path, keep the index in step: every insert and
-- every delete of a log line (AppendLogs, retention, anything later) goes
-- through them in the same transaction.
CREATE TRIGGER log_lines_search_insert AFTER INSERT ON log_lines BEGIN
	INSERT INTO log_search (rowid, text) VALUES (new.job_id * 4294967296 + new.seq, new.text);
END;
CREATE TRIGGER log_lines_search_delete AFTER DELETE ON log_lines BEGIN
	DELETE FROM log_search WHERE rowid = old.job_id * 4294967296 + old.seq;
END;

-- Lines stored before this migration.
INSERT INTO log_search (rowid, text) SELECT job_id * 4294967296 + seq, text FROM log_lines;

-- The runs history (store/history.go) pages by id within each filter.
CREATE INDEX jobs_user ON jobs (user, id);
CREATE INDEX jobs_project ON jobs (project_id, id);
CREATE INDEX jobs_created ON jobs (created_at);

-- When a job's final outcome was told to its pull request, so that a
-- resumed request or a restart never posts the same outcome twice.
ALTER TABLE jobs ADD COLUMN reported_at INTEGER;

-- Retention (store/retention.go) prunes old rows a small batch per
-- transaction. Each batch must find its rows through an index, not a table
-- scan, or it would hold the writer (and webhook intake) for the scan.

-- Set once every log line of a finished job has been pruned, so that later
-- batches skip the job instead of probing its (empty) log again.
ALTER TABLE jobs ADD COLUMN logs_pruned_at INTEGER;
-- Set when a plan's file and show -json output were pruned; the row, its
-- hash, summary and times stay.
ALTER TABLE plans ADD COLUMN pruned_at INTEGER;

CREATE INDEX jobs_logs_prunable ON jobs (finished_at) WHERE logs_pruned_at IS NULL AND finished_at IS NOT NULL;
CREATE INDEX plans_prunable ON plans (COALESCE(applied_at, discarded_at)) WHERE pruned_at IS NULL;
CREATE INDEX webhooks_received ON webhooks (received_at);
CREATE INDEX events_time ON events (time);

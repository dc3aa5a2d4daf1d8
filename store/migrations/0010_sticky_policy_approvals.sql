-- Sticky policy approvals (sticky_policy_approvals): a check's output items,
-- hashed (space-separated SHA-256 hex), and for each approval the items it
-- covers and, when it was kept from an earlier plan, that plan.
ALTER TABLE policy_checks ADD COLUMN sticky INTEGER NOT NULL DEFAULT 0;
ALTER TABLE policy_checks ADD COLUMN item_hashes TEXT NOT NULL DEFAULT '';
ALTER TABLE policy_approvals ADD COLUMN item_hashes TEXT NOT NULL DEFAULT '';
ALTER TABLE policy_approvals ADD COLUMN kept_from_plan INTEGER;

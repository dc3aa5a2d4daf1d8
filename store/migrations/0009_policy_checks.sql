-- Conftest policy checks (--enable-policy-checks): one row per policy set
-- checked against a stored plan, and the owners' approve_policies of the
-- failed ones. A new plan is checked again and needs new approvals.
CREATE TABLE policy_checks (
	id            INTEGER PRIMARY KEY,
	plan_id       INTEGER NOT NULL REFERENCES plans (id),
	policy_set    TEXT NOT NULL,
	passed        INTEGER NOT NULL,
	output        TEXT NOT NULL DEFAULT '',
	approve_count INTEGER NOT NULL,
	created_at    INTEGER NOT NULL,
	UNIQUE (plan_id, policy_set)
);

CREATE TABLE policy_approvals (
	id         INTEGER PRIMARY KEY,
	check_id   INTEGER NOT NULL REFERENCES policy_checks (id),
	user       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	UNIQUE (check_id, user)
);

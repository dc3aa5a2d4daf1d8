-- The VCS logins of an Atoll account, space-separated (a login has no
-- spaces): plan approvals recognise a pull request's author and a plan's
-- trigger, who are VCS logins, as the account through them.
ALTER TABLE users ADD COLUMN vcs_logins TEXT NOT NULL DEFAULT '';

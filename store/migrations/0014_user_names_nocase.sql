-- User names are unique ignoring case (atoll.UserName folds new names to
-- lower case; sign-in finds a name in any case). Names kept before this
-- version may differ only in case: then this migration fails, naming the
-- problem, and Atoll does not start, rather than guess which account a
-- name means. Delete all but one of each such set with the previous
-- version (the admin page), then upgrade again.
CREATE TEMP TABLE user_name_check (
	clashes INTEGER CONSTRAINT "user names that differ only in case exist: delete all but one of each with the previous version, then upgrade again" CHECK (clashes = 0)
);
INSERT INTO temp.user_name_check SELECT COUNT(*) FROM (SELECT 1 FROM users GROUP BY name COLLATE NOCASE HAVING COUNT(*) > 1);
DROP TABLE temp.user_name_check;
CREATE UNIQUE INDEX users_name_nocase ON users (name COLLATE NOCASE);

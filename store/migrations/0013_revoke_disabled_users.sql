-- Disabling a user now deletes its sessions and API tokens in the same
-- transaction, so that enabling it again revives none. Users disabled
-- before this version kept their tokens (they only stopped working while
-- the user was disabled): revoke them now, and any session left over.
DELETE FROM api_tokens WHERE user_id IN (SELECT id FROM users WHERE disabled = 1);
DELETE FROM sessions WHERE user_id IN (SELECT id FROM users WHERE disabled = 1);

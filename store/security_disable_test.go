package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// Disabling a user deletes its sessions and API tokens in the transaction
// that disables it and records the event, and tells the live streams;
// enabling it again revives neither.
func TestSecurityDisableRevokesForGood(t *testing.T) {
	ctx := context.Background()
	changes := inmem.NewChanges()
	db := storetest.Open(t, storetest.Changes(changes))
	alice := createUser(t, db, "alice", atoll.RoleOperator)
	bob := createUser(t, db, "bob", atoll.RoleViewer)
	session, sessionHash := atoll.NewSecret()
	token, tokenHash := atoll.NewSecret()
	bobToken, bobHash := atoll.NewSecret()
	update(t, db, func(tx *store.Tx) error {
		if err := tx.CreateSession(alice.ID, sessionHash); err != nil {
			return err
		}
		if _, err := tx.CreateToken(alice.ID, "ci", tokenHash); err != nil {
			return err
		}
		_, err := tx.CreateToken(bob.ID, "ci", bobHash)
		return err
	})
	sub, cancel := changes.Subscribe()
	defer cancel()

	if err := db.SetUserDisabled(ctx, alice.ID, true, "root", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM api_tokens WHERE user_id = ?`, alice.ID); n != 0 {
		t.Errorf("%d API token(s) of the disabled user left", n)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM sessions WHERE user_id = ?`, alice.ID); n != 0 {
		t.Errorf("%d session(s) of the disabled user left", n)
	}
	if events, err := db.Events(ctx, 1); err != nil || len(events) != 1 || events[0].Action != "user.disable" {
		t.Errorf("last event %+v, %v; want user.disable", events, err)
	}
	select {
	case c := <-sub:
		if c.Topic != atoll.TopicUser || c.UserID != alice.ID {
			t.Errorf("published %+v; want a user change of %d", c, alice.ID)
		}
	case <-time.After(5 * time.Second):
		t.Error("no change published for the disabled user")
	}

	if err := db.SetUserDisabled(ctx, alice.ID, false, "root", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TokenUser(ctx, atoll.HashSecret(token)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Errorf("token from before the disable, after re-enabling: %v; want EUNAUTHORIZED", err)
	}
	if _, err := db.SessionUser(ctx, atoll.HashSecret(session)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Errorf("session from before the disable, after re-enabling: %v; want EUNAUTHORIZED", err)
	}
	// Only the disabled user's: bob's token still works.
	if u, err := db.TokenUser(ctx, atoll.HashSecret(bobToken)); err != nil || u.ID != bob.ID {
		t.Errorf("another user's token: %+v, %v", u, err)
	}
}

// A database from before this version keeps the tokens of users disabled
// then: the migration revokes them, and leaves enabled users' alone.
func TestSecurityMigrationRevokesDisabledUsersTokens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atoll.db")
	db := storetest.Open(t, storetest.Path(path))
	alice := createUser(t, db, "alice", atoll.RoleOperator)
	bob := createUser(t, db, "bob", atoll.RoleViewer)
	token, tokenHash := atoll.NewSecret()
	bobToken, bobHash := atoll.NewSecret()
	update(t, db, func(tx *store.Tx) error {
		if _, err := tx.CreateToken(alice.ID, "ci", tokenHash); err != nil {
			return err
		}
		if _, err := tx.CreateToken(bob.ID, "ci", bobHash); err != nil {
			return err
		}
		// Disabled as before: the flag alone, its token kept.
		if err := tx.Exec(`UPDATE users SET disabled = 1 WHERE id = ?`, alice.ID); err != nil {
			return err
		}
		return tx.Exec(`DELETE FROM schema_migrations WHERE name = 'migrations/0013_revoke_disabled_users.sql'`)
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = storetest.Open(t, storetest.Path(path))
	if n := count(t, db, `SELECT COUNT(*) FROM api_tokens WHERE user_id = ?`, alice.ID); n != 0 {
		t.Errorf("%d API token(s) of a user disabled before the migration left", n)
	}
	update(t, db, func(tx *store.Tx) error { return tx.SetUserDisabled(alice.ID, false) })
	if _, err := db.TokenUser(ctx, atoll.HashSecret(token)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Errorf("the old token after re-enabling: %v; want EUNAUTHORIZED", err)
	}
	if u, err := db.TokenUser(ctx, atoll.HashSecret(bobToken)); err != nil || u.ID != bob.ID {
		t.Errorf("an enabled user's token: %+v, %v", u, err)
	}
}

// A disabled OIDC account is refused when the provider signs it in again;
// enabled, it signs in as before.
func TestSecurityDisabledOIDCUserRefused(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	in := atoll.OIDCSignIn{Subject: "https://idp.example dana", Name: "dana@example.com", AltName: "oidc:dana"}
	dana, err := db.OIDCUser(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetUserDisabled(ctx, dana.ID, true, "root", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if u, err := db.OIDCUser(ctx, in); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("disabled OIDC user signing in: %+v, %v; want EUNAUTHORIZED", u, err)
	}
	// Nor does a role from the provider's lists let it back in.
	in.Role = atoll.RoleAdmin
	if u, err := db.OIDCUser(ctx, in); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("disabled OIDC admin signing in: %+v, %v; want EUNAUTHORIZED", u, err)
	}
	if a, err := db.UserByID(ctx, dana.ID); err != nil || !a.Disabled || a.Role != atoll.RoleViewer {
		t.Fatalf("after refused sign-ins: %+v, %v; want a disabled viewer", a, err)
	}
	if err := db.SetUserDisabled(ctx, dana.ID, false, "root", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if u, err := db.OIDCUser(ctx, in); err != nil || u.ID != dana.ID {
		t.Fatalf("re-enabled OIDC user: %+v, %v", u, err)
	}
}

// A live stream's checks (CheckSession, CheckToken) record no use: an open
// stream does not keep an idle session alive.
func TestSecurityStreamCheckKeepsNoSessionAlive(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	db := storetest.Open(t, storetest.Clock(func() time.Time { return now }))
	alice := createUser(t, db, "alice", atoll.RoleViewer)
	session, sessionHash := atoll.NewSecret()
	token, tokenHash := atoll.NewSecret()
	update(t, db, func(tx *store.Tx) error {
		if err := tx.CreateSession(alice.ID, sessionHash); err != nil {
			return err
		}
		_, err := tx.CreateToken(alice.ID, "ci", tokenHash)
		return err
	})
	now = now.Add(atoll.SessionIdle - time.Hour)
	if u, err := db.CheckSession(ctx, atoll.HashSecret(session)); err != nil || u.ID != alice.ID {
		t.Fatalf("CheckSession: %+v, %v", u, err)
	}
	if u, err := db.CheckToken(ctx, atoll.HashSecret(token)); err != nil || u.ID != alice.ID {
		t.Fatalf("CheckToken: %+v, %v", u, err)
	}
	if toks, err := db.Tokens(ctx); err != nil || len(toks) != 1 || toks[0].LastUsedAt != nil {
		t.Fatalf("tokens after CheckToken: %+v, %v; want no use recorded", toks, err)
	}
	now = now.Add(time.Hour)
	if _, err := db.CheckSession(ctx, atoll.HashSecret(session)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("idle session after only checks: %v; want EUNAUTHORIZED", err)
	}
}

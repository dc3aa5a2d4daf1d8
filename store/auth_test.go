package store_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

func createUser(t *testing.T, db *store.DB, name string, role atoll.Role) *atoll.User {
	t.Helper()
	var u *atoll.User
	err := db.Update(context.Background(), func(tx *store.Tx) (err error) {
		u, err = tx.CreateUser(atoll.NewUser{Name: name, Role: role, Source: atoll.UserSourceLocal, PasswordHash: "$2a$10$notarealhash"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestUsersSessionsTokens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atoll.db")
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	db := storetest.Open(t, storetest.Path(path), storetest.Clock(func() time.Time { return now }))
	alice := createUser(t, db, "alice", atoll.RoleOperator)
	err := db.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateUser(atoll.NewUser{Name: "alice", Role: atoll.RoleViewer, Source: atoll.UserSourceLocal})
		return err
	})
	if atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("duplicate name: err = %v, want conflict", err)
	}

	session, sessionHash := atoll.NewSecret()
	token, tokenHash := atoll.NewSecret()
	var tokenID int64
	err = db.Update(ctx, func(tx *store.Tx) (err error) {
		if err = tx.CreateSession(alice.ID, sessionHash); err != nil {
			return err
		}
		tokenID, err = tx.CreateToken(alice.ID, "ci", tokenHash)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := db.SessionUser(ctx, atoll.HashSecret(session)); err != nil || u.Name != "alice" || u.Role != atoll.RoleOperator {
		t.Fatalf("session user = %+v, %v", u, err)
	}
	if u, err := db.TokenUser(ctx, atoll.HashSecret(token)); err != nil || u.Name != "alice" {
		t.Fatalf("token user = %+v, %v", u, err)
	}
	if _, err := db.TokenUser(ctx, atoll.HashSecret("wrong")); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("wrong token: err = %v", err)
	}
	toks, err := db.Tokens(ctx)
	if err != nil || len(toks) != 1 || toks[0].LastUsedAt == nil || toks[0].User != "alice" {
		t.Fatalf("tokens = %+v, %v", toks, err)
	}

	// Idle for the idle limit: the session has ended; the token has not.
	now = now.Add(atoll.SessionIdle)
	if _, err := db.SessionUser(ctx, atoll.HashSecret(session)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("idle session: err = %v", err)
	}
	if _, err := db.TokenUser(ctx, atoll.HashSecret(token)); err != nil {
		t.Fatal(err)
	}
	// Revoked tokens stop working; disabled users' tokens too, for good.
	_, otherHash := atoll.NewSecret()
	err = db.Update(ctx, func(tx *store.Tx) error {
		if _, err := tx.RevokeToken(tokenID); err != nil {
			return err
		}
		_, err := tx.CreateToken(alice.ID, "other", otherHash)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.TokenUser(ctx, atoll.HashSecret(token)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("revoked token: err = %v", err)
	}
	err = db.Update(ctx, func(tx *store.Tx) error { return tx.SetUserDisabled(alice.ID, true) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.TokenUser(ctx, otherHash); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("disabled user's token: err = %v", err)
	}
	err = db.Update(ctx, func(tx *store.Tx) error { return tx.SetUserDisabled(alice.ID, false) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.TokenUser(ctx, otherHash); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("token of a re-enabled user, made before the disable: err = %v", err)
	}
	db.Close()
	// Neither secret reaches the file, only their hashes.
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(session)) || bytes.Contains(b, []byte(token)) {
			t.Fatalf("%s holds a secret", f)
		}
	}
}

func TestSessionAbsoluteExpiry(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	db := storetest.Open(t, storetest.Clock(func() time.Time { return now }))
	u := createUser(t, db, "bob", atoll.RoleViewer)
	session, hash := atoll.NewSecret()
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.CreateSession(u.ID, hash) }); err != nil {
		t.Fatal(err)
	}
	// Used every 6 hours, it never idles out, but ends after 7 days.
	for now.Add(6 * time.Hour).Before(time.Date(2026, 1, 8, 12, 0, 0, 0, time.UTC)) {
		now = now.Add(6 * time.Hour)
		if _, err := db.SessionUser(ctx, atoll.HashSecret(session)); err != nil {
			t.Fatalf("at %v: %v", now, err)
		}
	}
	now = time.Date(2026, 1, 8, 12, 0, 0, 0, time.UTC)
	if _, err := db.SessionUser(ctx, atoll.HashSecret(session)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("after 7 days: err = %v", err)
	}
}

package store_test

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// The admin changes keep an enabled admin, and each is one transaction
// with its audit event: a refused change writes neither.
func TestAdminChangesKeepAnAdmin(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	root := createUser(t, db, "root", atoll.RoleAdmin)
	refused := []struct {
		name   string
		change func() error
	}{
		{"demote", func() error { return db.SetUserRole(ctx, root.ID, atoll.RoleOperator, "root", "10.0.0.1") }},
		{"disable", func() error { return db.SetUserDisabled(ctx, root.ID, true, "root", "10.0.0.1") }},
		{"delete", func() error { return db.DeleteUser(ctx, root.ID, "root", "10.0.0.1") }},
	}
	for _, c := range refused {
		if err := c.change(); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("%s of the last admin: %v, want %s", c.name, err, atoll.EINVALID)
		}
	}
	if a, err := db.UserByID(ctx, root.ID); err != nil || a.Role != atoll.RoleAdmin || a.Disabled {
		t.Fatalf("last admin after refused changes = %+v, %v", a, err)
	}
	if evs := events(t, db); len(evs) != 0 {
		t.Fatalf("refused changes were audited: %+v", evs)
	}

	bob, err := db.CreateUser(ctx, atoll.NewUser{Name: "bob", Role: atoll.RoleAdmin, Source: atoll.UserSourceLocal, PasswordHash: "$2a$10$x"}, "root", "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, atoll.NewUser{Name: "bob", Role: atoll.RoleViewer, Source: atoll.UserSourceLocal}, "root", "10.0.0.1"); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Errorf("second bob: %v, want %s", err, atoll.ECONFLICT)
	}
	if err := db.SetUserDisabled(ctx, root.ID, true, "bob", "10.0.0.2"); err != nil {
		t.Fatalf("disable root with bob an admin: %v", err)
	}
	if err := db.SetUserRole(ctx, bob.ID, atoll.RoleViewer, "bob", "10.0.0.2"); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("demote bob, the last enabled admin: %v, want %s", err, atoll.EINVALID)
	}
	if err := db.DeleteUser(ctx, 999, "bob", "10.0.0.2"); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("delete a user that does not exist: %v, want %s", err, atoll.ENOTFOUND)
	}
	want := []atoll.Event{ // newest first
		{Actor: "bob", Action: "user.disable", Detail: "root from 10.0.0.2"},
		{Actor: "root", Action: "user.create", Detail: "bob as admin from 10.0.0.1"},
	}
	got := events(t, db)
	if len(got) != len(want) {
		t.Fatalf("events %+v, want %+v", got, want)
	}
	for i, e := range got {
		if e.Actor != want[i].Actor || e.Action != want[i].Action || e.Detail != want[i].Detail {
			t.Errorf("event %d = %+v, want %+v", i, e, want[i])
		}
	}
}

// A token's creation and revocation are audited with it.
func TestTokenChangesAudited(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	alice := createUser(t, db, "alice", atoll.RoleOperator)
	secret, hash := atoll.NewSecret()
	if err := db.CreateToken(ctx, alice.ID, "ci", hash, "root", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if u, err := db.TokenUser(ctx, atoll.HashSecret(secret)); err != nil || u.Name != "alice" {
		t.Fatalf("token user = %+v, %v", u, err)
	}
	if err := db.CreateToken(ctx, 999, "ci", hash, "root", "10.0.0.1"); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("token of no user: %v, want %s", err, atoll.ENOTFOUND)
	}
	tokens, err := db.Tokens(ctx)
	if err != nil || len(tokens) != 1 {
		t.Fatalf("tokens = %+v, %v", tokens, err)
	}
	tok, err := db.RevokeToken(ctx, tokens[0].ID, "root", "10.0.0.1")
	if err != nil || tok.Name != "ci" || tok.User != "alice" {
		t.Fatalf("revoke = %+v, %v", tok, err)
	}
	if _, err := db.TokenUser(ctx, atoll.HashSecret(secret)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Errorf("revoked token: %v, want %s", err, atoll.EUNAUTHORIZED)
	}
	if _, err := db.RevokeToken(ctx, tokens[0].ID, "root", "10.0.0.1"); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("revoke twice: %v, want %s", err, atoll.ENOTFOUND)
	}
	got := events(t, db)
	if len(got) != 2 || got[0].Action != "token.revoke" || got[0].Detail != "ci of alice from 10.0.0.1" ||
		got[1].Action != "token.create" || got[1].Detail != "ci for alice from 10.0.0.1" {
		t.Errorf("events %+v", got)
	}
}

func events(t *testing.T, db *store.DB) []atoll.Event {
	t.Helper()
	evs, err := db.AuditEvents(context.Background(), atoll.EventFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

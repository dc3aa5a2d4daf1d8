package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// A database from before user names were folded may hold names that differ
// only in case. Upgrading it fails, saying so, rather than letting one name
// sign in as whichever account a lookup finds first; once all but one of
// each are gone, it upgrades, and lookups find names in any case.
func TestSecurityUserNamesDifferingInCase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atoll.db")
	db := storetest.Open(t, storetest.Path(path))
	db.Close()
	// Back to the schema of the previous version, with two such names.
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`DELETE FROM schema_migrations WHERE name LIKE '%user_names_nocase%'`)
	exec(`DROP INDEX IF EXISTS users_name_nocase`)
	exec(`INSERT INTO users (name, role, source, created_at) VALUES ('Ann', 'admin', 'local', 0), ('ann', 'viewer', 'local', 0), ('Bob', 'viewer', 'local', 0)`)

	db = store.NewDB(path)
	err = db.Open(ctx)
	if err == nil {
		db.Close()
		t.Fatal("a database with Ann and ann opened")
	}
	if !strings.Contains(err.Error(), "user names that differ only in case exist") {
		t.Fatalf("the error does not say why: %v", err)
	}

	exec(`DELETE FROM users WHERE name = 'ann'`)
	db = storetest.Open(t, storetest.Path(path))
	for _, name := range []string{"ann", "ANN", "bob"} {
		if a, err := db.UserByName(ctx, name); err != nil || !strings.EqualFold(a.Name, name) {
			t.Errorf("UserByName(%q) = %v, %v", name, a, err)
		}
	}
	err = db.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateUser(atoll.NewUser{Name: "bob", Role: atoll.RoleViewer, Source: atoll.UserSourceLocal})
		return err
	})
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "A user called Bob already exists") {
		t.Errorf("create bob next to Bob: %v", err)
	}
}

package store

import (
	"context"
	"fmt"

	"github.com/atollhq/atoll"
)

// The admin page's changes to users. Each is one transaction with its audit
// event by actor (from source, the client's address), and each refuses to
// leave Atoll without an enabled admin: the rule lives here, not in every
// caller.

// adminChange runs fn, which returns the audit event's detail, between two
// counts of the enabled admins, then records the event.
func (db *DB) adminChange(ctx context.Context, actor, source, action string, fn func(tx *Tx) (string, error)) error {
	return db.Update(ctx, func(tx *Tx) error {
		before, err := tx.CountAdmins()
		if err != nil {
			return err
		}
		detail, err := fn(tx)
		if err != nil {
			return err
		}
		if after, err := tx.CountAdmins(); err != nil {
			return err
		} else if before > 0 && after == 0 {
			return atoll.Errorf(atoll.EINVALID, "Refused: Atoll would have no enabled admin left.")
		}
		return tx.AddEvent(atoll.Event{Actor: actor, Action: action, Detail: detail + " from " + source})
	})
}

// userName is the name of user id as the transaction sees it (ENOTFOUND if
// none), for audit events.
func (tx *Tx) userName(id int64) (string, error) {
	a, err := accountWhere(tx.ctx, tx.tx, fmt.Sprint(id), `id = ?`, id)
	if err != nil {
		return "", err
	}
	return a.Name, nil
}

// CreateUser adds an account as an admin's change (audit action
// "user.create"); a taken name is ECONFLICT.
func (db *DB) CreateUser(ctx context.Context, u atoll.NewUser, actor, source string) (*atoll.User, error) {
	var out *atoll.User
	err := db.adminChange(ctx, actor, source, "user.create", func(tx *Tx) (detail string, err error) {
		if out, err = tx.CreateUser(u); err != nil {
			return "", err
		}
		return out.Name + " as " + string(u.Role), nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetUserRole changes the role of user id as an admin's change ("user.role").
func (db *DB) SetUserRole(ctx context.Context, id int64, role atoll.Role, actor, source string) error {
	return db.adminChange(ctx, actor, source, "user.role", func(tx *Tx) (string, error) {
		name, err := tx.userName(id)
		if err != nil {
			return "", err
		}
		return name + " to " + string(role), tx.SetUserRole(id, role)
	})
}

// SetUserDisabled disables (or enables) user id as an admin's change
// ("user.disable" or "user.enable"); disabling signs it out everywhere and
// deletes its API tokens, in the same transaction.
func (db *DB) SetUserDisabled(ctx context.Context, id int64, disabled bool, actor, source string) error {
	action := "user.disable"
	if !disabled {
		action = "user.enable"
	}
	return db.adminChange(ctx, actor, source, action, func(tx *Tx) (string, error) {
		name, err := tx.userName(id)
		if err != nil {
			return "", err
		}
		return name, tx.SetUserDisabled(id, disabled)
	})
}

// DeleteUser deletes user id with its sessions and API tokens as an admin's
// change ("user.delete").
func (db *DB) DeleteUser(ctx context.Context, id int64, actor, source string) error {
	return db.adminChange(ctx, actor, source, "user.delete", func(tx *Tx) (string, error) {
		name, err := tx.userName(id)
		if err != nil {
			return "", err
		}
		return name, tx.DeleteUser(id)
	})
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/atollhq/atoll"
)

const userColumns = `id, name, role, source, password_hash, oidc_subject, disabled, created_at, vcs_logins`

func scanAccount(s scanner) (*atoll.Account, error) { return scanAccountPlus(s) }

func accountWhere(ctx context.Context, q querier, what, where string, args ...any) (*atoll.Account, error) {
	a, err := scanAccount(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "No such user.")
	} else if err != nil {
		return nil, fmt.Errorf("store user %s: %w", what, err)
	}
	return a, nil
}

// UserByName returns the account called name, in any case (ENOTFOUND if
// none): names are unique ignoring case.
func (db *DB) UserByName(ctx context.Context, name string) (*atoll.Account, error) {
	return accountWhere(ctx, db.reader(), name, `name = ? COLLATE NOCASE`, name)
}

// UserByID returns account id (ENOTFOUND if none).
func (db *DB) UserByID(ctx context.Context, id int64) (*atoll.Account, error) {
	return accountWhere(ctx, db.reader(), fmt.Sprint(id), `id = ?`, id)
}

// Users lists every account by name.
func (db *DB) Users(ctx context.Context) ([]*atoll.Account, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY name`)
	return collect(rows, err, "users", scanAccount)
}

// UserByName is DB.UserByName inside a write transaction.
func (tx *Tx) UserByName(name string) (*atoll.Account, error) {
	return accountWhere(tx.ctx, tx.tx, name, `name = ? COLLATE NOCASE`, name)
}

// UserByOIDCSubject returns the OIDC account of subject ("issuer subject").
func (tx *Tx) UserByOIDCSubject(subject string) (*atoll.Account, error) {
	return accountWhere(tx.ctx, tx.tx, subject, `oidc_subject = ? AND oidc_subject != ''`, subject)
}

// CreateUser adds an account under its name as atoll.NewUser.CheckName
// folds it (EINVALID if it cannot be a name); a name taken in any case is
// ECONFLICT.
func (tx *Tx) CreateUser(u atoll.NewUser) (*atoll.User, error) {
	name, err := u.CheckName()
	if err != nil {
		return nil, err
	}
	if !u.Role.Valid() {
		return nil, atoll.Errorf(atoll.EINVALID, "Unknown role %q: viewer, operator or admin.", u.Role)
	}
	if u.Source != atoll.UserSourceLocal && u.Source != atoll.UserSourceOIDC {
		return nil, fmt.Errorf("store create user %s: unknown source %q", u.Name, u.Source)
	}
	switch taken, err := tx.UserByName(name); {
	case err == nil && u.Name == taken.Name:
		return nil, atoll.Errorf(atoll.ECONFLICT, "A user called %s already exists.", taken.Name)
	case err == nil:
		return nil, atoll.Errorf(atoll.ECONFLICT, "A user called %s already exists: %q is the same name, as user names ignore case and width.", taken.Name, u.Name)
	case atoll.ErrorCode(err) != atoll.ENOTFOUND:
		return nil, err
	}
	res, err := tx.exec(`INSERT INTO users (name, role, source, password_hash, oidc_subject, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		name, string(u.Role), u.Source, u.PasswordHash, u.OIDCSubject, ts(tx.now))
	if err != nil {
		return nil, fmt.Errorf("store create user %s: %w", name, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("store create user %s: %w", name, err)
	}
	return &atoll.User{ID: id, Name: name, Role: u.Role, Source: u.Source, CreatedAt: tx.now}, nil
}

// updateUser runs one UPDATE of user id, ENOTFOUND if there is none.
func (tx *Tx) updateUser(id int64, what, query string, args ...any) error {
	res, err := tx.exec(query, append(args, id)...)
	if err != nil {
		return fmt.Errorf("store user %d %s: %w", id, what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return atoll.Errorf(atoll.ENOTFOUND, "No such user.")
	}
	return nil
}

// SetUserRole changes the role of user id.
func (tx *Tx) SetUserRole(id int64, role atoll.Role) error {
	if !role.Valid() {
		return atoll.Errorf(atoll.EINVALID, "Unknown role %q: viewer, operator or admin.", role)
	}
	if err := tx.updateUser(id, "role", `UPDATE users SET role = ? WHERE id = ?`, string(role)); err != nil {
		return err
	}
	tx.notifyUser(id)
	return nil
}

// SetUserPassword replaces the bcrypt hash of local user id and ends its
// sessions: whoever knew the old password is signed out.
func (tx *Tx) SetUserPassword(id int64, hash string) error {
	if err := tx.updateUser(id, "password", `UPDATE users SET password_hash = ? WHERE id = ? AND source = 'local'`, hash); err != nil {
		return err
	}
	return tx.endSessions(id)
}

// SetUserDisabled disables (or enables) user id. Disabling also deletes
// its sessions and API tokens, for good: enabling it again revives none.
func (tx *Tx) SetUserDisabled(id int64, disabled bool) error {
	if err := tx.updateUser(id, "disabled", `UPDATE users SET disabled = ? WHERE id = ?`, disabled); err != nil {
		return err
	}
	tx.notifyUser(id)
	if !disabled {
		return nil
	}
	if err := tx.endSessions(id); err != nil {
		return err
	}
	if _, err := tx.exec(`DELETE FROM api_tokens WHERE user_id = ?`, id); err != nil {
		return fmt.Errorf("store revoke tokens of user %d: %w", id, err)
	}
	return nil
}

// DeleteUser deletes user id with its sessions and API tokens.
func (tx *Tx) DeleteUser(id int64) error {
	if err := tx.updateUser(id, "delete", `DELETE FROM users WHERE id = ?`); err != nil {
		return err
	}
	tx.notifyUser(id)
	return nil
}

// CountAdmins counts the enabled admins, so that the last one is never
// demoted, disabled or deleted.
func (tx *Tx) CountAdmins() (int, error) {
	var n int
	if err := tx.queryRow(`SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled = 0`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store count admins: %w", err)
	}
	return n, nil
}

// OIDCUser finds the account of in.Subject, or creates it, in one
// transaction: a disabled account is EUNAUTHORIZED, an existing account
// takes the role the provider grants, and a new account is named in.Name
// folded as atoll.UserName folds it, or in.AltName if in.Name cannot be a
// user name (an e-mail address that is not ASCII, say) or is taken in any
// case. The account gains the VCS logins of in.VCSLogins it lacks.
func (db *DB) OIDCUser(ctx context.Context, in atoll.OIDCSignIn) (*atoll.User, error) {
	var u *atoll.User
	err := db.Update(ctx, func(tx *Tx) error {
		a, err := tx.UserByOIDCSubject(in.Subject)
		switch {
		case err == nil:
			if a.Disabled {
				return atoll.Errorf(atoll.EUNAUTHORIZED, "This account is disabled.")
			}
			if in.Role != "" && in.Role != a.Role {
				if err := tx.SetUserRole(a.ID, in.Role); err != nil {
					return err
				}
				a.Role = in.Role
			}
			u = &a.User
			return tx.addOIDCVCSLogins(a, in.VCSLogins)
		case atoll.ErrorCode(err) != atoll.ENOTFOUND:
			return err
		}
		role := in.Role
		if role == "" {
			role = atoll.RoleViewer
		}
		name, err := tx.oidcName(in)
		if err != nil {
			return err
		}
		if u, err = tx.CreateUser(atoll.NewUser{Name: name, Role: role, Source: atoll.UserSourceOIDC, OIDCSubject: in.Subject}); err != nil {
			return err
		}
		return tx.addOIDCVCSLogins(&atoll.Account{User: *u}, in.VCSLogins)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// oidcName is the name of a new OIDC account: in.Name folded, or in.AltName
// if in.Name cannot be a user name or is taken in any case.
func (tx *Tx) oidcName(in atoll.OIDCSignIn) (string, error) {
	name, err := atoll.UserName(in.Name)
	if err != nil {
		return in.AltName, nil
	}
	switch _, err := tx.UserByName(name); {
	case err == nil:
		return in.AltName, nil
	case atoll.ErrorCode(err) == atoll.ENOTFOUND:
		return name, nil
	default:
		return "", err
	}
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// adminAccount is the local account --admin-password sets.
const adminAccount = "admin"

// authConfig is the sign-in part of Config.
type authConfig struct {
	AdminPassword     string
	OIDCIssuer        string
	OIDCClientID      string
	OIDCClientSecret  string
	OIDCAdminUsers    string
	OIDCOperatorUsers string
	OIDCVCSLoginClaim string
}

func (c *authConfig) validate() error {
	if (c.OIDCClientID != "" || c.OIDCClientSecret != "" || c.OIDCAdminUsers != "" || c.OIDCOperatorUsers != "" || c.OIDCVCSLoginClaim != "") && c.OIDCIssuer == "" {
		return fmt.Errorf("--oidc-* flags need --oidc-issuer")
	}
	if c.OIDCIssuer != "" && c.OIDCClientID == "" {
		return fmt.Errorf("--oidc-issuer needs --oidc-client-id")
	}
	return nil
}

// oidc is the web server's OIDC configuration, nil without --oidc-issuer.
func (c *authConfig) oidc() *web.OIDC {
	if c.OIDCIssuer == "" {
		return nil
	}
	return &web.OIDC{Issuer: c.OIDCIssuer, ClientID: c.OIDCClientID, ClientSecret: c.OIDCClientSecret,
		AdminUsers: splitList(c.OIDCAdminUsers), OperatorUsers: splitList(c.OIDCOperatorUsers), VCSLoginClaim: strings.TrimSpace(c.OIDCVCSLoginClaim)}
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// bootstrapAdmin makes sure someone can sign in: with --admin-password it
// creates or updates the local account "admin" (role admin, enabled);
// without it, if no enabled local admin exists, it sets a random password
// on "admin" and prints it once to stderr with fmt, not the logger, so
// that it stays out of structured logs. Only the bcrypt hash is stored.
func (m *Main) bootstrapAdmin(ctx context.Context) error {
	password := m.Config.AdminPassword
	existing, err := m.DB.UserByName(ctx, adminAccount)
	if err != nil && atoll.ErrorCode(err) != atoll.ENOTFOUND {
		return fmt.Errorf("admin account: %w", err)
	}
	if existing != nil && existing.Source != atoll.UserSourceLocal {
		return fmt.Errorf("admin account: the user %q signs in with OIDC, not a password", adminAccount)
	}
	generated := false
	if password == "" {
		users, err := m.DB.Users(ctx)
		if err != nil {
			return fmt.Errorf("admin account: %w", err)
		}
		for _, u := range users {
			if u.Source == atoll.UserSourceLocal && u.Role == atoll.RoleAdmin && !u.Disabled {
				return nil // someone can sign in and manage the rest
			}
		}
		b := make([]byte, 18)
		rand.Read(b)
		password, generated = base64.RawURLEncoding.EncodeToString(b), true
	}
	if existing != nil && existing.Role == atoll.RoleAdmin && !existing.Disabled &&
		bcrypt.CompareHashAndPassword([]byte(existing.PasswordHash), []byte(password)) == nil {
		return nil // unchanged: keep its sessions
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return fmt.Errorf("admin account: %w", err)
	}
	how := "--admin-password"
	if generated {
		how = "one-time password printed at start"
	}
	err = m.DB.Update(ctx, func(tx *store.Tx) error {
		a, err := tx.UserByName(adminAccount)
		switch {
		case atoll.ErrorCode(err) == atoll.ENOTFOUND:
			if _, err := tx.CreateUser(atoll.NewUser{Name: adminAccount, Role: atoll.RoleAdmin, Source: atoll.UserSourceLocal, PasswordHash: string(hash)}); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			if err := tx.SetUserPassword(a.ID, string(hash)); err != nil {
				return err
			}
			if err := tx.SetUserRole(a.ID, atoll.RoleAdmin); err != nil {
				return err
			}
			if err := tx.SetUserDisabled(a.ID, false); err != nil {
				return err
			}
		}
		return tx.AddEvent(atoll.Event{Actor: "atoll", Action: "user.password", Detail: adminAccount + ": " + how})
	})
	if err != nil {
		return fmt.Errorf("admin account: %w", err)
	}
	if generated {
		fmt.Fprintf(m.stderr(), "\nSign in to Atoll as %q with the one-time password:\n\n    %s\n\n"+
			"It is shown only now (Atoll keeps only its hash). Choose your own with --admin-password or ATOLL_ADMIN_PASSWORD.\n\n",
			adminAccount, password)
	}
	return nil
}

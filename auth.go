package atoll

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// Role is what a signed-in user may do. Each role may do everything the
// roles before it may.
type Role string

// Roles, weakest first.
const (
	// RoleViewer reads every page, log and plan.
	RoleViewer Role = "viewer"
	// RoleOperator also plans, approves, rejects, applies and unlocks.
	RoleOperator Role = "operator"
	// RoleAdmin also freezes applies and manages users and API tokens.
	RoleAdmin Role = "admin"
)

var roleRank = map[Role]int{RoleViewer: 1, RoleOperator: 2, RoleAdmin: 3}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// Allows reports whether a user with role r may do what needs role need.
func (r Role) Allows(need Role) bool { return r.Valid() && roleRank[r] >= roleRank[need] }

// User is someone who signs in to Atoll (the dashboard or the API). Who did
// something is always the signed-in user, never a name from a request body.
type User struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Source is how the user signs in: "local" (password) or "oidc".
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"created_at"`
}

type userKey struct{}

// NewContextWithUser returns ctx carrying the signed-in user.
func NewContextWithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFromContext returns the signed-in user of ctx, or nil.
func UserFromContext(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}

// APIToken is an API token as listed (never its secret).
type APIToken struct {
	ID         int64      `json:"id"`
	UserID     int64      `json:"user_id"`
	User       string     `json:"user"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// Account is a user with what only sign-in and the admin page need.
type Account struct {
	User
	// PasswordHash is the bcrypt hash of a local user's password ('' for
	// OIDC users, who never sign in with one).
	PasswordHash string `json:"-"`
	// OIDCSubject is "issuer subject" of an OIDC user.
	OIDCSubject string `json:"-"`
	Disabled    bool   `json:"disabled"`
	// VCSLogins are the user's logins on the VCS hosts (see
	// NormalizeVCSLogins), through which plan approvals recognise the
	// author of a pull request and the trigger of a plan as this user.
	VCSLogins []string `json:"vcs_logins"`
}

// User sources: how a user signs in (User.Source). Named apart from the
// event sources (SourceAPI, ...), which say where an action came from.
const (
	UserSourceLocal = "local"
	UserSourceOIDC  = "oidc"
)

// NewUser is what creating a user needs.
type NewUser struct {
	Name         string
	Role         Role
	Source       string // UserSourceLocal or UserSourceOIDC
	PasswordHash string // bcrypt, local users
	OIDCSubject  string // "issuer subject", OIDC users
}

// Session lifetimes: a session ends after SessionIdle without use or
// SessionMaxAge after sign-in, whichever comes first.
const (
	SessionIdle   = 12 * time.Hour
	SessionMaxAge = 7 * 24 * time.Hour
)

// NewSecret returns a random 32-byte secret (a session cookie or an API
// token), URL-safe, and the hash under which it is stored. The secret
// itself is never stored.
func NewSecret() (secret string, hash []byte) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, HashSecret(secret)
}

// HashSecret is the SHA-256 of a secret: what the database keeps. A plain
// hash suffices because the secrets are 256 random bits, not passwords.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// OIDCSignIn is who an OpenID Connect provider says signed in, for
// UserService.OIDCUser.
type OIDCSignIn struct {
	// Subject is "issuer subject": the account's key.
	Subject string
	// Name names a new account; AltName does if Name is already taken.
	Name, AltName string
	// Role is the role the provider's claims grant ("" if they grant none:
	// an existing account keeps its role, a new one is a viewer).
	Role Role
	// VCSLogins, from the claim --oidc-vcs-login-claim names, are added to
	// the account's VCS logins (never removed: an admin removes them).
	VCSLogins []string
}

// UserService keeps users, their sessions and API tokens. Every change is
// one transaction with its audit event by actor (the signed-in user) from
// source (the client's address); the admin changes refuse to leave no
// enabled admin (EINVALID).
type UserService interface {
	Users(ctx context.Context) ([]*Account, error)
	UserByID(ctx context.Context, id int64) (*Account, error)
	UserByName(ctx context.Context, name string) (*Account, error)
	Tokens(ctx context.Context) ([]*APIToken, error)
	// TokenUser and SessionUser return the enabled user of the API token
	// or live session hashing to hash (HashSecret); EUNAUTHORIZED if none.
	TokenUser(ctx context.Context, hash []byte) (*User, error)
	SessionUser(ctx context.Context, hash []byte) (*User, error)
	// CheckToken and CheckSession are TokenUser and SessionUser without
	// recording the use: what a live stream checks its credential with
	// again while it lasts, which must not keep an idle session alive.
	CheckToken(ctx context.Context, hash []byte) (*User, error)
	CheckSession(ctx context.Context, hash []byte) (*User, error)

	CreateUser(ctx context.Context, u NewUser, actor, source string) (*User, error)
	SetUserRole(ctx context.Context, id int64, role Role, actor, source string) error
	// SetUserDisabled disables (or enables) a user. Disabling deletes the
	// user's sessions and API tokens for good: enabling revives none.
	SetUserDisabled(ctx context.Context, id int64, disabled bool, actor, source string) error
	// SetUserVCSLogins replaces the VCS logins of user id (normalized by
	// NormalizeVCSLogins; EINVALID if one is not a login).
	SetUserVCSLogins(ctx context.Context, id int64, logins []string, actor, source string) error
	DeleteUser(ctx context.Context, id int64, actor, source string) error
	CreateToken(ctx context.Context, userID int64, name string, hash []byte, actor, source string) error
	RevokeToken(ctx context.Context, id int64, actor, source string) (*APIToken, error)
	// StartSession stores the hash of u's new session (how: "local",
	// "oidc"); EndSession deletes the session of hash, if any.
	StartSession(ctx context.Context, u *User, hash []byte, how, source string) error
	EndSession(ctx context.Context, hash []byte, source string) error
	// OIDCUser finds or creates the account an OIDC provider signed in.
	OIDCUser(ctx context.Context, in OIDCSignIn) (*User, error)
}

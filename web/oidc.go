package web

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/atollhq/atoll"
)

// OIDC is sign-in through an OpenID Connect provider (authorization code
// flow with state, nonce and PKCE). Users are created on first sign-in as
// viewers unless listed in AdminUsers or OperatorUsers (by email, verified
// by the provider, or by subject); the lists are applied at every sign-in
// of a listed user, and unlisted users keep the role an admin gave them.
type OIDC struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	AdminUsers   []string
	// OperatorUsers are made operators.
	OperatorUsers []string
	// VCSLoginClaim names the ID token claim (a string or a list of
	// strings) whose values are added to the account's VCS logins at each
	// sign-in (--oidc-vcs-login-claim; "" reads none).
	VCSLoginClaim string

	mu       sync.Mutex
	provider *oidc.Provider // discovered on first use, so start-up does not need the provider
}

// oidcCookie carries state, nonce, PKCE verifier and where to go back, from
// /auth/oidc/login to the callback, for ten minutes.
const oidcCookie = "atoll_oidc"

func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery %s: %w", o.Issuer, err)
	}
	o.provider = p
	return p, nil
}

func (s *Server) oauthConfig(r *http.Request, p *oidc.Provider) *oauth2.Config {
	base := strings.TrimRight(s.PublicURL, "/")
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return &oauth2.Config{ClientID: s.OIDC.ClientID, ClientSecret: s.OIDC.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: base + "/auth/oidc/callback", Scopes: []string{oidc.ScopeOpenID, "profile", "email"}}
}

// handleOIDCLogin sends the browser to the provider.
func (s *Server) handleOIDCLogin(w http.ResponseWriter, r *http.Request) {
	if s.OIDC == nil {
		s.pageError(w, r, atoll.Errorf(atoll.ENOTFOUND, "OIDC sign-in is not set up: start Atoll with --oidc-issuer."))
		return
	}
	p, err := s.OIDC.discover(r.Context())
	if err != nil {
		s.Logger.Error("oidc", "err", err)
		s.pageError(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "The sign-in provider cannot be reached: try again shortly."))
		return
	}
	state, _ := atoll.NewSecret()
	nonce, _ := atoll.NewSecret()
	verifier := oauth2.GenerateVerifier()
	next := safeBack(r.URL.Query().Get("next"))
	value := strings.Join([]string{state, nonce, verifier, base64.RawURLEncoding.EncodeToString([]byte(next))}, ".")
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: value, Path: "/auth/oidc/", MaxAge: 600, HttpOnly: true,
		Secure: s.secureCookies(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, s.oauthConfig(r, p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusFound)
}

// oidcClaims are the ID token claims Atoll reads.
type oidcClaims struct {
	Email             string `json:"email"`
	EmailVerified     bool   `json:"email_verified"`
	PreferredUsername string `json:"preferred_username"`
	// vcsLogins are the values of the OIDC's VCSLoginClaim.
	vcsLogins []string
}

// handleOIDCCallback finishes the flow: the state must match the cookie's,
// the code is exchanged with the PKCE verifier, and the ID token must be
// signed by the provider, for this client, unexpired and carry the nonce.
// Only then is the user found or created and signed in.
func (s *Server) handleOIDCCallback(w http.ResponseWriter, r *http.Request) {
	if s.OIDC == nil {
		s.pageError(w, r, atoll.Errorf(atoll.ENOTFOUND, "OIDC sign-in is not set up."))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Path: "/auth/oidc/", MaxAge: -1, HttpOnly: true, Secure: s.secureCookies(r), SameSite: http.SameSiteLaxMode})
	u, next, err := s.oidcUser(r)
	if err != nil {
		s.Logger.Warn("oidc sign-in refused", "err", err, "remote", source(r))
		s.audit(r, "oidc", "login_failed", "oidc")
		msg := atoll.ErrorMessage(err)
		if atoll.ErrorCode(err) == atoll.EINTERNAL {
			msg = "Sign-in failed: the provider's answer could not be verified."
		}
		s.renderLogin(w, r, http.StatusUnauthorized, "/", "", msg)
		return
	}
	if err := s.startSession(w, r, u, "oidc"); err != nil {
		s.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// oidcUser checks the callback and returns the signed-in user.
func (s *Server) oidcUser(r *http.Request) (*atoll.User, string, error) {
	ctx := r.Context()
	refused := atoll.Errorf(atoll.EUNAUTHORIZED, "Sign-in failed or expired: try again.")
	c, err := r.Cookie(oidcCookie)
	if err != nil {
		return nil, "", refused
	}
	parts := strings.Split(c.Value, ".")
	q := r.URL.Query()
	if len(parts) != 4 || q.Get("error") != "" || subtle.ConstantTimeCompare([]byte(parts[0]), []byte(q.Get("state"))) != 1 {
		return nil, "", refused
	}
	nonce, verifier := parts[1], parts[2]
	nextB, _ := base64.RawURLEncoding.DecodeString(parts[3])
	p, err := s.OIDC.discover(ctx)
	if err != nil {
		return nil, "", err
	}
	tok, err := s.oauthConfig(r, p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, "", fmt.Errorf("oidc code exchange: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, "", fmt.Errorf("oidc: the token response has no id_token")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: s.OIDC.ClientID}).Verify(ctx, raw)
	if err != nil {
		return nil, "", fmt.Errorf("oidc id token: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return nil, "", fmt.Errorf("oidc id token: wrong nonce")
	}
	var cl oidcClaims
	if err := idt.Claims(&cl); err != nil {
		return nil, "", fmt.Errorf("oidc claims: %w", err)
	}
	if cl.vcsLogins, err = s.OIDC.claimedVCSLogins(idt); err != nil {
		return nil, "", err
	}
	u, err := s.oidcAccount(ctx, idt.Issuer, idt.Subject, cl)
	return u, safeBack(string(nextB)), err
}

// oidcRole is the role the lists give a user, or "" when unlisted.
func (o *OIDC) role(subject string, cl oidcClaims) atoll.Role {
	listed := func(list []string) bool {
		return slices.Contains(list, subject) || (cl.EmailVerified && cl.Email != "" && slices.ContainsFunc(list, func(e string) bool { return strings.EqualFold(e, cl.Email) }))
	}
	switch {
	case listed(o.AdminUsers):
		return atoll.RoleAdmin
	case listed(o.OperatorUsers):
		return atoll.RoleOperator
	}
	return ""
}

// oidcAccount finds the account of issuer+subject, or creates it (named by
// verified email, else preferred username, else subject).
func (s *Server) oidcAccount(ctx context.Context, issuer, subject string, cl oidcClaims) (*atoll.User, error) {
	key := issuer + " " + subject
	role := s.OIDC.role(subject, cl)
	name := subject
	if cl.EmailVerified && cl.Email != "" {
		name = cl.Email
	} else if cl.PreferredUsername != "" {
		name = cl.PreferredUsername
	}
	// "oidc:subject" if a local account has the name.
	return s.DB.OIDCUser(ctx, atoll.OIDCSignIn{Subject: key, Name: name, AltName: "oidc:" + subject, Role: role, VCSLogins: cl.vcsLogins})
}

// claimedVCSLogins are the values of the VCSLoginClaim of the ID token: a
// string or the strings of a list (anything else is ignored).
func (o *OIDC) claimedVCSLogins(idt *oidc.IDToken) ([]string, error) {
	if o.VCSLoginClaim == "" {
		return nil, nil
	}
	var all map[string]any
	if err := idt.Claims(&all); err != nil {
		return nil, fmt.Errorf("oidc claims: %w", err)
	}
	var out []string
	switch v := all[o.VCSLoginClaim].(type) {
	case string:
		out = append(out, v)
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

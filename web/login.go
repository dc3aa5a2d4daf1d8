package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// wrongPassword is the one answer to every failed sign-in, so that it does
// not tell which names exist.
const wrongPassword = "Wrong name or password."

// dummyHash is compared against when the name is unknown, so that a failed
// sign-in takes as long whether or not the account exists.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("no such user"), bcrypt.DefaultCost)

// checkPassword returns the enabled local user name whose password is
// password (EUNAUTHORIZED otherwise), unless addr or the account failed
// too often lately (ETOOMANY, and no password is checked). The attempt is
// counted as a failure before the password is compared, and taken back
// only once it matched (or no password was compared).
func (s *Server) checkPassword(ctx context.Context, addr, name, password string) (*atoll.User, error) {
	now := s.now()
	if s.logins.clock != nil {
		now = s.logins.clock()
	}
	attempt, err := s.logins.reserve(addr, name, now)
	if err != nil {
		return nil, err
	}
	u, err := s.matchPassword(ctx, name, password)
	switch {
	case err == nil:
		s.logins.succeeded(attempt)
	case atoll.ErrorCode(err) != atoll.EUNAUTHORIZED:
		s.logins.released(attempt) // the database failed: no guess was made
	}
	return u, err
}

// matchPassword is checkPassword without the limit.
func (s *Server) matchPassword(ctx context.Context, name, password string) (*atoll.User, error) {
	a, err := s.DB.UserByName(ctx, name)
	switch {
	case atoll.ErrorCode(err) == atoll.ENOTFOUND:
		bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, wrongPassword)
	case err != nil:
		return nil, err
	}
	hash := []byte(a.PasswordHash)
	if a.Source != atoll.UserSourceLocal || a.PasswordHash == "" {
		hash = dummyHash
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || a.Disabled || a.Source != atoll.UserSourceLocal {
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, wrongPassword)
	}
	return &a.User, nil
}

// authRoutes registers signing in and out, OIDC, the admin page and
// /api/v1/me.
func (s *Server) authRoutes(mux *routeMux) {
	mux.HandleFunc("GET /login", s.handleLoginPage)
	mux.HandleFunc("POST /login", s.handleLogin)
	mux.HandleFunc("POST /logout", s.handleLogout)
	mux.HandleFunc("GET /auth/oidc/login", s.handleOIDCLogin)
	mux.HandleFunc("GET /auth/oidc/callback", s.handleOIDCCallback)
	mux.HandleFunc("GET /api/v1/me", s.handleMe)
	s.adminRoutes(mux)
}

// handleLoginPage shows the sign-in form (and the OIDC button if set up).
func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	next := safeBack(r.URL.Query().Get("next"))
	if atoll.UserFromContext(r.Context()) != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	s.renderLogin(w, r, http.StatusOK, next, "", "")
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, next, name, msg string) {
	page := templates.LoginPage{Meta: s.pageMeta(r.Context()), Next: next, Name: name, Error: msg, OIDC: s.OIDC != nil}
	page.Meta.User = nil
	s.renderPage(w, r, status, templates.Login(page))
}

// handleLogin checks a local account's password and starts a session.
// Success and failure are both audit events, with the client's address.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if err := readForm(w, r, maxForm); err != nil {
		s.renderLogin(w, r, s.errorStatus(r, err), "/", "", atoll.ErrorMessage(err))
		return
	}
	name, password := strings.TrimSpace(r.PostForm.Get("name")), r.PostForm.Get("password")
	next := safeBack(r.PostForm.Get("next"))
	u, err := s.checkPassword(r.Context(), source(r), name, password)
	if err != nil {
		if atoll.ErrorCode(err) == atoll.ETOOMANY {
			s.renderLogin(w, r, http.StatusTooManyRequests, next, name, atoll.ErrorMessage(err))
			return
		}
		if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
			s.pageError(w, r, err)
			return
		}
		s.audit(r, s.loginFailedActor(r.Context(), name), "login_failed", "local")
		time.Sleep(200 * time.Millisecond) // a little friction for guessing
		s.renderLogin(w, r, http.StatusUnauthorized, next, name, wrongPassword)
		return
	}
	if err := s.startSession(w, r, u, "local"); err != nil {
		s.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// startSession signs u in: a new session row (its hash), the cookie, and
// the audit event.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u *atoll.User, how string) error {
	secret, hash := atoll.NewSecret()
	if err := s.DB.StartSession(r.Context(), u, hash, how, source(r)); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: "/", HttpOnly: true,
		Secure: s.secureCookies(r), SameSite: http.SameSiteLaxMode, MaxAge: int(atoll.SessionMaxAge / time.Second)})
	return nil
}

// handleLogout ends the session: its row is deleted, so the cookie is
// worthless even if kept.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		if err := s.DB.EndSession(r.Context(), atoll.HashSecret(c.Value), source(r)); err != nil {
			s.failed(w, r, "/", err)
			return
		}
	}
	s.clearSessionCookie(w, r)
	if wantsHTML(r) {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"signed_out": true})
}

// handleMe returns the signed-in user.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, atoll.UserFromContext(r.Context()))
}

func (s *Server) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: s.secureCookies(r), SameSite: http.SameSiteLaxMode})
}

// secureCookies reports whether cookies must be Secure: the request came
// over TLS, or users reach Atoll over https (a TLS-terminating proxy).
func (s *Server) secureCookies(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(strings.ToLower(s.PublicURL), "https://")
}

// audit records an event outside any other write; a failure is logged,
// not shown (the answer does not depend on it).
func (s *Server) audit(r *http.Request, actor, action, how string) {
	if err := s.DB.AddEvent(r.Context(), atoll.Event{Actor: actor, Action: action, Detail: how + " from " + source(r)}); err != nil {
		s.Logger.Warn("audit event not recorded", "action", action, "err", err)
	}
}

// loginFailedActor is who a failed sign-in with name is recorded against:
// the account's own name if there is one (the account exists, so its name
// is no secret), else "unknown user" and a tag. What was typed is never
// recorded: the audit log is shown to every viewer, and a name field
// sometimes holds a password typed in the wrong place.
func (s *Server) loginFailedActor(ctx context.Context, name string) string {
	a, err := s.DB.UserByName(ctx, name)
	if err == nil {
		return a.Name
	}
	if atoll.ErrorCode(err) != atoll.ENOTFOUND {
		// Not err itself: the store's message quotes the name typed.
		s.Logger.Warn("failed sign-in: its account could not be read; recorded as an unknown user", "code", atoll.ErrorCode(err))
	}
	return "unknown user (" + unknownNameTag(name) + ")"
}

// unknownNameKey keys unknownNameTag. It is random, made at start and
// kept only in memory, so a tag cannot be matched against guesses of what
// was typed; it changes at every start, so tags only tell attempts of one
// run apart.
var unknownNameKey = func() []byte {
	k := make([]byte, 32)
	rand.Read(k) // never fails (crypto/rand)
	return k
}()

// unknownNameTag is a short, non-reversible tag of an unknown name: the
// audit log tells one name tried again and again from many names tried
// once, without showing any of them.
func unknownNameTag(name string) string {
	m := hmac.New(sha256.New, unknownNameKey)
	m.Write([]byte(name))
	return hex.EncodeToString(m.Sum(nil)[:4])
}

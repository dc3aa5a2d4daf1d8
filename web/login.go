package web

import (
	"context"
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
// password (EUNAUTHORIZED otherwise), unless addr failed too often lately
// (ETOOMANY, and no password is checked).
func (s *Server) checkPassword(ctx context.Context, addr, name, password string) (*atoll.User, error) {
	now := s.now()
	if s.logins.clock != nil {
		now = s.logins.clock()
	}
	if ok, wait := s.logins.allow(addr, now); !ok {
		return nil, atoll.Errorf(atoll.ETOOMANY, "Too many failed sign-ins from your address: try again in %d min.", int((wait+time.Minute-1)/time.Minute))
	}
	u, err := s.matchPassword(ctx, name, password)
	switch {
	case err == nil:
		s.logins.succeeded(addr)
	case atoll.ErrorCode(err) == atoll.EUNAUTHORIZED:
		s.logins.failed(addr, now)
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
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := readForm(w, r, maxForm); err != nil {
		s.renderLogin(w, r, http.StatusBadRequest, "/", "", "The form could not be read.")
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
		s.audit(r, auditName(name), "login_failed", "local")
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

// auditName bounds a name typed into the login form before it is recorded.
func auditName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "(empty)"
	}
	return name
}

package web

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/atollhq/atoll"
)

// sessionCookie holds a session's secret; the database keeps only its hash.
const sessionCookie = "atoll_session"

// apiSecretUser is who the legacy --api-secret signs in as: an admin token
// named "api-secret" that lives in the flag, not the database.
var apiSecretUser = atoll.User{Name: "api-secret", Role: atoll.RoleAdmin, Source: "token"}

// identify puts the signed-in user into the request's context. It keeps a
// user already there (tests inject one), else takes the first credential
// the request carries: an API token (Authorization: Bearer, or Atlantis's
// X-Atlantis-Token; --api-secret is one too), HTTP basic auth of a local
// account (scripts), then the session cookie. A wrong token or password is
// refused at once on routes that need a user; an ended session only means
// nobody is signed in.
//
// It runs on the node that serves the request: a standby identifies reads
// from its own copy of the database (sessions and tokens replicate) and
// forwards everything else, credentials included, to the active node.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if atoll.UserFromContext(r.Context()) == nil && !anonymousPath(r.URL.Path) {
			u, err := s.whoIs(w, r)
			if err != nil && !openPath(r.URL.Path) && !driftPath(r.URL.Path) {
				s.unauthorized(w, r, err)
				return
			}
			if u != nil {
				r = r.WithContext(atoll.NewContextWithUser(r.Context(), u))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// whoIs returns the user r's credentials name, nil if it carries none (or
// an ended session), or why its credentials are refused.
func (s *Server) whoIs(w http.ResponseWriter, r *http.Request) (*atoll.User, error) {
	ctx := r.Context()
	if token := requestToken(r); token != "" {
		if s.APISecret != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.APISecret)) == 1 {
			u := apiSecretUser
			return &u, nil
		}
		return s.DB.TokenUser(ctx, atoll.HashSecret(token))
	}
	if name, password, ok := r.BasicAuth(); ok {
		return s.checkPassword(ctx, source(r), name, password)
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		u, err := s.DB.SessionUser(ctx, atoll.HashSecret(c.Value))
		if atoll.ErrorCode(err) == atoll.EUNAUTHORIZED {
			s.clearSessionCookie(w, r)
			return nil, nil
		}
		return u, err
	}
	return nil, nil
}

// requestToken is the API token r carries (Authorization: Bearer, the
// scheme in any case, else X-Atlantis-Token), or "".
func requestToken(r *http.Request) string {
	if b, ok := bearerToken(r.Header.Get("Authorization")); ok {
		return b
	}
	return r.Header.Get("X-Atlantis-Token")
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme. Auth schemes are case-insensitive (RFC 9110 section 11.1): "bearer
// x" is as good as "Bearer x" (r.BasicAuth already reads "basic" so).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// openPath reports the routes that need nobody signed in: webhooks (signed
// by the VCS host), the worker protocol (its own bearer tokens), health
// checks, signing in and out, and static files.
func openPath(p string) bool {
	switch p {
	case "/events", "/healthz", "/readyz", "/login", "/logout", "/favicon.ico":
		return true
	}
	return strings.HasPrefix(p, "/auth/oidc/") || strings.HasPrefix(p, "/assets/") || workerPath(p)
}

// anonymousPath reports the open routes that never look at who is signed
// in, so that webhooks, the worker protocol (whose bearer tokens are no
// API tokens), health checks and static files cost no database read.
func anonymousPath(p string) bool {
	switch p {
	case "/events", "/healthz", "/readyz", "/favicon.ico":
		return true
	}
	return strings.HasPrefix(p, "/assets/") || workerPath(p)
}

// gate lets through only signed-in users, except to the open routes:
// every page, log, websocket, metric and API call needs a session or a
// token. Which role a route needs is up to the route (s.require).
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if openPath(r.URL.Path) || driftPath(r.URL.Path) || atoll.UserFromContext(r.Context()) != nil {
			next.ServeHTTP(w, r)
			return
		}
		s.unauthorized(w, r, atoll.Errorf(atoll.EUNAUTHORIZED, "Sign in first: use a session (/login), an API token (Authorization: Bearer) or basic auth."))
	})
}

// unauthorized answers a request nobody is signed in for: a browser
// opening a page goes to the login page and comes back afterwards; htmx is
// told to go there; a form post (whose body a redirect would lose) gets a
// 401 page, scripts and the API 401 JSON. Nothing runs.
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, err error) {
	if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		s.error(w, r, err) // the database failed, say, not the credentials
		return
	}
	login := loginPath(r)
	switch {
	case isHTMX(r):
		w.Header().Set("HX-Redirect", login)
	case opensPage(r):
		http.Redirect(w, r, login, http.StatusSeeOther)
		return
	}
	w.Header().Add("WWW-Authenticate", `Bearer realm="atoll"`)
	s.refuse(w, r, err)
}

// opensPage reports a browser asking for a page (not the API, a script, a
// websocket or a form post whose body would be lost anyway).
func opensPage(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	return !strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasSuffix(r.URL.Path, "/ws") &&
		r.Header.Get("Authorization") == "" && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// loginPath is the login page, coming back to r's page (GETs only).
func loginPath(r *http.Request) string {
	if r.Method != http.MethodGet || r.URL.Path == "/" {
		return "/login"
	}
	return "/login?next=" + url.QueryEscape(safeBack(r.URL.RequestURI()))
}

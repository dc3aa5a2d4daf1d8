package web

import (
	"context"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// flashCookie carries the outcome of a form post across its redirect, so
// that pages work without JavaScript: POST, then 303 to the page, which
// shows the message once.
const flashCookie = "atoll_flash"

// wantsHTML reports whether the client is a browser page rather than the
// JSON API or a script.
func wantsHTML(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		return false
	}
	if r.Header.Get("HX-Request") == "true" {
		return true
	}
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "text/html") || (accept == "" && r.Method != http.MethodGet && r.Header.Get("Content-Type") == "application/x-www-form-urlencoded")
}

// isHTMX reports whether htmx sent the request: it swaps a fragment in
// place rather than following a redirect.
func isHTMX(r *http.Request) bool { return r.Header.Get("HX-Request") == "true" }

// done answers a successful action. htmx gets fragment (or the message as a
// flash fragment when fragment is nil), a plain form post is redirected to
// back with msg shown once there, and the API gets v as JSON.
func (s *Server) done(w http.ResponseWriter, r *http.Request, back, msg string, fragment templ.Component, v any) {
	switch {
	case isHTMX(r):
		if fragment == nil {
			fragment = templates.Flash(msg, true)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := fragment.Render(r.Context(), w); err != nil {
			s.Logger.Error("render fragment", "path", r.URL.Path, "err", err)
		}
	case wantsHTML(r):
		setFlash(w, "ok:"+msg)
		http.Redirect(w, r, safeBack(back), http.StatusSeeOther)
	default:
		writeJSON(w, http.StatusOK, v)
	}
}

// failed answers a refused or failed action with err's safe message, in
// the same three shapes as done; nothing was changed.
func (s *Server) failed(w http.ResponseWriter, r *http.Request, back string, err error) {
	switch {
	case isHTMX(r):
		// htmx swaps only 2xx answers by default: say it in place with the
		// real status for scripts that look.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("HX-Reswap", "innerHTML")
		w.WriteHeader(s.errorStatus(r, err))
		templates.Flash(atoll.ErrorMessage(err), false).Render(r.Context(), w)
	case wantsHTML(r):
		s.errorStatus(r, err) // logs internal errors
		setFlash(w, "error:"+atoll.ErrorMessage(err))
		http.Redirect(w, r, safeBack(back), http.StatusSeeOther)
	default:
		s.error(w, r, err)
	}
}

func setFlash(w http.ResponseWriter, v string) {
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(v), Path: "/", MaxAge: 60, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

type flashKey struct{}

type flash struct {
	msg string
	ok  bool
}

// withFlash moves a pending flash message from its cookie into the request
// context of the page that shows it, where pageMeta finds it.
func withFlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasPrefix(r.URL.Path, "/assets/") {
			if msg, ok := takeFlash(w, r); msg != "" {
				r = r.WithContext(context.WithValue(r.Context(), flashKey{}, flash{msg, ok}))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// flashOf returns the flash message of the request, if any.
func flashOf(ctx context.Context) (string, bool) {
	f, _ := ctx.Value(flashKey{}).(flash)
	return f.msg, f.ok
}

// takeFlash returns the pending flash message (ok reports success) and
// clears it.
func takeFlash(w http.ResponseWriter, r *http.Request) (msg string, ok bool) {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return "", false
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	v, err := url.QueryUnescape(c.Value)
	if err != nil {
		return "", false
	}
	if m, found := strings.CutPrefix(v, "ok:"); found {
		return m, true
	}
	m, _ := strings.CutPrefix(v, "error:")
	return m, false
}

// safeBack returns p if it is a path on this site that a redirect may go
// to, else "/". p is a form field or query value the client chose (next=,
// back=), so it is read as a browser would read a Location header: a
// browser drops tabs and newlines, treats a backslash as a slash, resolves
// "." and ".." segments, and takes anything that then starts with two
// slashes for another host. Rather than repair such a value, it is refused:
// no page Atoll links to needs one.
func safeBack(p string) string {
	if !isLocalPath(p) {
		return "/"
	}
	return p
}

// maxUnescapes bounds how many layers of percent-encoding isLocalPath
// peels off; a value with more is refused.
const maxUnescapes = 3

// isLocalPath reports whether p is an origin-relative URL (a path with an
// optional query and fragment) that stays one however many times it is
// percent-decoded: a proxy or a later redirect may decode it again, so
// "/%2F%2Fevil.example" is refused like "//evil.example".
func isLocalPath(p string) bool {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	for range maxUnescapes + 1 {
		if !isPlainPath(p) {
			return false
		}
		decoded, err := url.PathUnescape(p)
		if err != nil {
			return false
		}
		if decoded == p {
			return true
		}
		p = decoded
	}
	return false
}

// isPlainPath reports whether p starts with exactly one slash, holds no
// character a browser drops or rewrites (hasUnsafeRune), and has a path
// part (up to "?" or "#") with no empty, "." or ".." segment: path.Clean
// leaves it as it is, but for a trailing slash.
func isPlainPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || hasUnsafeRune(p) {
		return false
	}
	pathPart, _, _ := strings.Cut(p, "?")
	pathPart, _, _ = strings.Cut(pathPart, "#")
	clean := path.Clean(pathPart)
	return pathPart == clean || pathPart == clean+"/"
}

// hasUnsafeRune reports a character that a browser or proxy may drop or
// rewrite in a URL: control characters, whitespace, backslashes, and
// bytes that are not UTF-8.
func hasUnsafeRune(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, func(r rune) bool {
		return r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r)
	})
}

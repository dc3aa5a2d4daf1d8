package web

import "net/http"

// contentSecurityPolicy lets pages load only Atoll's own files: no inline
// script or style, no framing, forms post only here.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// securityHeaderValues are set on every response.
var securityHeaderValues = map[string]string{
	"Content-Security-Policy": contentSecurityPolicy,
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "same-origin",
	"X-Frame-Options":         "DENY",
}

// securityHeaders sets securityHeaderValues on every response, errors,
// redirects and API answers included.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range securityHeaderValues {
			h.Set(k, v)
		}
		next.ServeHTTP(w, r)
	})
}

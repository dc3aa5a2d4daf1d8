package web

import (
	"mime"
	"net/http"
	"strings"
)

// guardMutations keeps browsers on other sites away from every route that
// changes state (any method but GET, HEAD and OPTIONS): the request must
// pass Go's cross-origin protection (Sec-Fetch-Site, else Origin against
// Host), which refuses other sites' forms and scripts, and carry a JSON body
// (API) or a form body (the dashboard's own pages). A request without a body
// (DELETE /api/v1/locks/{id}, POST /logout) has no media type to check and
// needs no Content-Type. POST /events is exempt: webhooks come from the VCS
// host, authenticated by their signature; so are the worker protocol's
// routes (workerPath), called by workers and git with a bearer token that
// no browser sends on its own, with git's own media types.
func guardMutations(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost && (r.URL.Path == "/events" || workerPath(r.URL.Path)) {
			next.ServeHTTP(w, r)
			return
		}
		if err := cop.Check(r); err != nil {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "Cross-origin request refused: use the API from Atoll's own pages or a non-browser client."})
			return
		}
		if r.ContentLength == 0 {
			next.ServeHTTP(w, r) // no body (a chunked one has length -1 and is checked)
			return
		}
		media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		// The dashboard's forms post form-encoded bodies to page routes
		// (they work without JavaScript); the API takes JSON only.
		form := media == "application/x-www-form-urlencoded" && !strings.HasPrefix(r.URL.Path, "/api/")
		if media != "application/json" && !form {
			writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "Content-Type must be application/json."})
			return
		}
		next.ServeHTTP(w, r)
	})
}

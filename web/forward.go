package web

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"

	"github.com/atollhq/atoll"
)

// forwardedHeader marks a request a standby forwarded, so that it is never
// forwarded twice (two standbys, or a stale view of who is active).
const forwardedHeader = "X-Atoll-Forwarded-By"

// readsLocally reports a request a standby may answer from its own copy:
// reading, and not the live log stream, which only the active node has,
// nor the OIDC callback, which writes (the user and the session), nor the
// worker protocol, whose claims only the active node holds.
func readsLocally(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasSuffix(r.URL.Path, "/ws") &&
		r.URL.Path != "/auth/oidc/callback" && !workerPath(r.URL.Path)
}

// servedByEveryNode are the routes a standby answers itself.
var servedByEveryNode = map[string]bool{"/healthz": true, "/readyz": true, "/api/v1/status": true, "/metrics": true}

// forwardToActive sends what a standby does not serve itself (anything
// but reading, or reading before its copy is restored) to the active node: by reverse proxy to the active's advertise URL (websockets
// included), or on Fly.io by asking Fly's proxy to replay the request on
// the active machine. With no active node known it answers 503 and
// Retry-After: a webhook is then redelivered, never lost silently.
func (s *Server) forwardToActive(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Cluster == nil || servedByEveryNode[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		st := s.Cluster.Status(r.Context())
		if st.Role == atoll.RoleActive {
			next.ServeHTTP(w, r)
			return
		}
		if readsLocally(r) && s.DB.Readable() {
			// Pages and the read API come from this standby's copy, a
			// little behind the active (the pages say how much).
			w.Header().Set("X-Atoll-Standby", st.Node)
			next.ServeHTTP(w, r)
			return
		}
		// Forwarded once already, no active known, or this node itself
		// (taking over, not serving yet): try again shortly.
		if r.Header.Get(forwardedHeader) != "" || st.ActiveURL == "" || st.ActiveNode == st.Node {
			w.Header().Set("Retry-After", "2")
			s.error(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "This node is a standby and no active node is known yet: try again shortly."))
			return
		}
		if os.Getenv("FLY_APP_NAME") != "" && st.ActiveNode != "" {
			w.Header().Set("fly-replay", "instance="+st.ActiveNode)
			w.WriteHeader(http.StatusConflict)
			return
		}
		target, err := url.Parse(st.ActiveURL)
		if err != nil {
			s.error(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "The active node's address is invalid."))
			return
		}
		proxy := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.Host = pr.In.Host
				pr.SetXForwarded()
				pr.Out.Header.Set(forwardedHeader, st.Node)
			},
			// This node set the security headers already; the active's
			// copies would repeat them.
			ModifyResponse: func(resp *http.Response) error {
				for k := range securityHeaderValues {
					resp.Header.Del(k)
				}
				return nil
			},
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				s.Logger.Warn("forward to the active node failed", "active", st.ActiveNode, "err", err)
				w.Header().Set("Retry-After", "2")
				s.error(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "The active node did not answer: try again shortly."))
			},
		}
		proxy.ServeHTTP(w, r)
	})
}

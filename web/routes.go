package web

import "net/http"

// routeMux is the ServeMux that Handler and every xxxRoutes function
// register on. It keeps each pattern, in order, so that the route × role
// matrix test (web/auth_test.go) fails when a route is registered without
// an entry there: registering through it is the only way in, as the
// xxxRoutes functions take a *routeMux.
type routeMux struct {
	mux      *http.ServeMux
	patterns []string
}

// HandleFunc registers h for pattern and records the pattern.
func (m *routeMux) HandleFunc(pattern string, h http.HandlerFunc) {
	m.patterns = append(m.patterns, pattern)
	m.mux.HandleFunc(pattern, h)
}

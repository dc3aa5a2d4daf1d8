package web

import (
	"slices"
	"time"
)

// Patterns returns the route patterns Handler registered, for the route ×
// role matrix test.
func (s *Server) Patterns() []string { return slices.Clone(s.patterns) }

// SetLoginClock makes s's sign-in limiter read now instead of the clock.
func SetLoginClock(s *Server, now func() time.Time) { s.logins.clock = now }

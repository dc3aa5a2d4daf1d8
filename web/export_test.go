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

// SetStreamRecheck makes s's live streams check their credential every d.
func SetStreamRecheck(s *Server, d time.Duration) { s.streamRecheck = d }

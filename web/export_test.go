package web

import "slices"

// Patterns returns the route patterns Handler registered, for the route ×
// role matrix test.
func (s *Server) Patterns() []string { return slices.Clone(s.patterns) }

package web

// liveRoutes registers the live parts of the dashboard: the overview, the
// job page and its log, and the streams that keep them current.
func (s *Server) liveRoutes(mux *routeMux) {
	if s.streamsEnd == nil {
		s.streamsEnd = make(chan struct{})
	}
	mux.HandleFunc("GET /{$}", s.handleOverview)
	mux.HandleFunc("GET /jobs/{id}", s.handleJobPage)
	mux.HandleFunc("GET /jobs/{id}/ws", s.handleJobWS)
	mux.HandleFunc("GET /jobs/{id}/log.txt", s.handleJobLogText)
	mux.HandleFunc("GET /api/v1/changes", s.handleChanges)
}

// endStreams ends the change streams (on Shutdown).
func (s *Server) endStreams() {
	s.streamsOnce.Do(func() {
		if s.streamsEnd != nil {
			close(s.streamsEnd)
		}
	})
}

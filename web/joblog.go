package web

import (
	"bufio"
	"net/http"
)

// handleJobLog writes a job's whole log as plain text, one line per line.
func (s *Server) handleJobLog(w http.ResponseWriter, r *http.Request) {
	job, err := s.job(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	lines, err := s.DB.Logs(r.Context(), job.ID, 0, 0)
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l.Text)
		bw.WriteByte('\n')
	}
	bw.Flush()
}

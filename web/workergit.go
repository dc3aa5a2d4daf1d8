package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// gitWriter is the answer UploadPack writes to: it tells whether anything
// was written, so that a failure before the first byte is answered as an
// error, and one after it breaks the connection (git then sees a broken
// transfer, never a short one).
type gitWriter struct {
	w       http.ResponseWriter
	written bool
}

func (g *gitWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		g.written = true
	}
	return g.w.Write(p)
}

// Flush sends what was written so far: a pack streams as it is made.
func (g *gitWriter) Flush() { http.NewResponseController(g.w).Flush() }

// gitHeaders are the headers of git's smart HTTP answers of kind
// ("advertisement" or "result").
func gitHeaders(w http.ResponseWriter, kind string) {
	h := w.Header()
	h.Set("Content-Type", "application/x-git-upload-pack-"+kind)
	h.Set("Cache-Control", "no-cache")
}

// gitFailed answers UploadPack's error: as JSON before any of the answer
// was written, else by aborting the response.
func (s *Server) gitFailed(w http.ResponseWriter, r *http.Request, g *gitWriter, err error) {
	if !g.written {
		w.Header().Del("Cache-Control")
		s.error(w, r, err)
		return
	}
	if atoll.ErrorCode(err) == atoll.EINTERNAL && r.Context().Err() == nil {
		s.Logger.Error("git upload-pack", "path", r.URL.Path, "err", err)
	}
	panic(http.ErrAbortHandler)
}

package web

import (
	"net/http"
	"time"

	"github.com/atollhq/atoll"
)

// handleWorkerInfoRefs is git's smart HTTP advertisement of the job's
// repository (?service=git-upload-pack: fetches only), streamed.
func (s *Server) handleWorkerInfoRefs(w http.ResponseWriter, r *http.Request, jobID int64, token string) {
	if svc := r.URL.Query()["service"]; len(svc) != 1 || svc[0] != "git-upload-pack" {
		s.error(w, r, atoll.Errorf(atoll.EFORBIDDEN, "Only fetches are served."))
		return
	}
	liftDeadlines(w, time.Now().Add(workerTransfer))
	gitHeaders(w, "advertisement")
	g := &gitWriter{w: w}
	if err := s.Workers.UploadPack(r.Context(), jobID, token, true, r.Header.Get("Git-Protocol"), http.NoBody, g); err != nil {
		s.gitFailed(w, r, g, err)
	}
}

package web

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/atollhq/atoll"
)

// handleWorkerUploadPack answers git's upload-pack request (wants and
// haves, gzipped when Content-Encoding: gzip) for the job's repository,
// streaming the pack as it is made.
func (s *Server) handleWorkerUploadPack(w http.ResponseWriter, r *http.Request, jobID int64, token string) {
	liftDeadlines(w, time.Now().Add(workerTransfer))
	var in io.Reader = r.Body
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(r.Body)
		if err != nil {
			s.error(w, r, atoll.Errorf(atoll.EINVALID, "The gzipped body cannot be read."))
			return
		}
		defer z.Close()
		in = z
	default:
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "Content-Encoding %q is not taken: send gzip or none.", enc))
		return
	}
	// Bounded after gunzip: a small body must not inflate without end.
	body := &limitedBody{r: in, left: maxUploadPackRequest}
	gitHeaders(w, "result")
	g := &gitWriter{w: w}
	err := s.Workers.UploadPack(r.Context(), jobID, token, false, r.Header.Get("Git-Protocol"), body, g)
	if err != nil {
		if body.over {
			err = errUploadPackTooLarge
		}
		s.gitFailed(w, r, g, err)
	}
}

// limitedBody reads at most left bytes, then fails, noting it was over.
type limitedBody struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		l.over = true
		n = int(l.left)
		l.left = 0
		return n, errUploadPackTooLarge
	}
	l.left -= int64(n)
	return n, err
}

var errUploadPackTooLarge = atoll.Errorf(atoll.ETOOLARGE, "Request body too large (limit %d KiB).", maxUploadPackRequest>>10)

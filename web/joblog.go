package web

import (
	"bufio"
	"net/http"
	"strconv"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/ansi"
)

// downloadPage is how many log lines a download reads from the store at
// once: a log of any size costs one page of memory.
const downloadPage = 5000

// handleJobLog writes a job's whole log as plain text, one line per line,
// as it was printed (escape sequences kept).
func (s *Server) handleJobLog(w http.ResponseWriter, r *http.Request) {
	job, err := s.job(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	s.streamLog(w, r, job, false)
}

// handleJobLogText downloads a job's whole log as a text file, with the
// terminal's escape sequences stripped.
func (s *Server) handleJobLogText(w http.ResponseWriter, r *http.Request) {
	job, err := s.job(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="atoll-job-`+strconv.FormatInt(job.ID, 10)+`.log"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	s.streamLog(w, r, job, true)
}

// streamLog writes the job's stored lines a page at a time. A long log
// takes longer than the server's write timeout, so each page gets its own
// write deadline instead. Once the first page is out, a failure can only
// cut the response short.
func (s *Server) streamLog(w http.ResponseWriter, r *http.Request, job *atoll.Job, strip bool) {
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	for from, first := int64(1), true; ; first = false {
		lines, err := s.DB.Logs(r.Context(), job.ID, from, downloadPage)
		if err != nil {
			if first {
				s.error(w, r, err)
			} else {
				s.Logger.Warn("job log download cut short", "job", job.ID, "err", err)
			}
			return
		}
		rc.SetWriteDeadline(time.Now().Add(defaultWriteTimeout))
		for _, l := range lines {
			if strip {
				buf = append(ansi.AppendStripped(buf[:0], l.Text), '\n')
				bw.Write(buf)
			} else {
				bw.WriteString(l.Text)
				bw.WriteByte('\n')
			}
		}
		if len(lines) < downloadPage {
			bw.Flush()
			return
		}
		from = lines[len(lines)-1].Seq + 1
	}
}

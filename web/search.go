package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// searchHit is one job of GET /api/v1/search.
type searchHit struct {
	Job     *atoll.Job      `json:"job"`
	Matches int             `json:"matches"`
	More    bool            `json:"more"`
	Lines   []atoll.LogLine `json:"lines"`
}

// handleSearch searches job logs: q (its syntax: the store's ParseSearch) and the runs
// filters; next_before, when not 0, is the before= of the next page.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	if err := listParams(r.URL.Query(), searchParams); err != nil {
		s.error(w, r, err)
		return
	}
	f, typed, err := jobFilter(r.URL.Query())
	if err == nil && f.After != 0 {
		err = atoll.Errorf(atoll.EINVALID, "A search pages towards older jobs only: use before, not after.")
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	res, err := s.DB.SearchLogs(r.Context(), typed.Q, f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := struct {
		Terms      []string    `json:"terms"`
		Hits       []searchHit `json:"hits"`
		NextBefore int64       `json:"next_before"`
	}{Terms: res.Terms, Hits: []searchHit{}}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, searchHit{Job: h.Job, Matches: h.Matches, More: h.More, Lines: h.Lines})
	}
	if res.Older && len(res.Hits) > 0 {
		out.NextBefore = res.Hits[len(res.Hits)-1].Job.ID
	}
	writeJSON(w, http.StatusOK, out)
}

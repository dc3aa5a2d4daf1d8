package store

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/atollhq/atoll"
)

// Search syntax, as the runs page documents it: every word must appear in
// a line (in any order, any case); "double quotes" match words next to each
// other in that order. Nothing else is special: OR, NOT, *, ^, : and
// parentheses are searched as text, so user input can never be an FTS5
// syntax error. Words are split as the index splits them (letters and
// digits; `aws_s3_bucket.logs` is the phrase "aws s3 bucket logs").
const (
	maxSearchLen   = 500
	maxSearchTerms = 16
	// searchScan bounds the matching lines one search reads; a page stops
	// early (with a cursor to go on) when a common word matches more.
	searchScan = 2000
	// searchLines is how many matching lines are kept per job.
	searchLines = 3
	// DefaultSearchJobs is the number of jobs on a search page.
	DefaultSearchJobs = 20
)

// ParseSearch turns what a user typed into an FTS5 query made only of
// quoted phrases, and returns the phrases (for highlighting). Coded errors
// say what is wrong with the input.
func ParseSearch(q string) (match string, terms []string, err error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return "", nil, atoll.Errorf(atoll.EINVALID, "Type something to search for.")
	}
	if len(q) > maxSearchLen {
		return "", nil, atoll.Errorf(atoll.EINVALID, "The search is too long (at most %d characters).", maxSearchLen)
	}
	if strings.Count(q, `"`)%2 != 0 {
		return "", nil, atoll.Errorf(atoll.EINVALID, `The search has an unbalanced double quote: close the phrase with " or remove it.`)
	}
	for i, part := range strings.Split(q, `"`) {
		if i%2 == 1 { // inside quotes: one phrase
			if p := strings.Join(strings.Fields(part), " "); wordy(p) {
				terms = append(terms, p)
			}
			continue
		}
		for _, w := range strings.Fields(part) {
			if wordy(w) {
				terms = append(terms, w)
			}
		}
	}
	if len(terms) == 0 {
		return "", nil, atoll.Errorf(atoll.EINVALID, "Search for at least one word or number.")
	}
	if len(terms) > maxSearchTerms {
		return "", nil, atoll.Errorf(atoll.EINVALID, "The search has too many words (at most %d).", maxSearchTerms)
	}
	phrases := make([]string, len(terms))
	for i, t := range terms {
		phrases[i] = `"` + t + `"` // t holds no double quote: they split phrases
	}
	return strings.Join(phrases, " "), terms, nil
}

// wordy reports whether s has a letter or digit: a phrase of punctuation
// alone has no tokens, and would match nothing.
func wordy(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0
}

// logKey is the log_search rowid of a line (0008_log_search.sql).
const logKey = 4294967296

// SearchLogs finds the jobs whose log has lines matching q (see
// ParseSearch), newest job first, among the jobs matching f (f.Before is
// the cursor; f.After is not used; f.Limit jobs per page, default
// DefaultSearchJobs).
func (db *DB) SearchLogs(ctx context.Context, q string, f atoll.JobFilter) (atoll.LogSearchResult, error) {
	match, terms, err := ParseSearch(q)
	if err != nil {
		return atoll.LogSearchResult{}, err
	}
	limit := f.Limit
	if limit <= 0 || limit > 200 {
		limit = DefaultSearchJobs
	}
	before := f.Before
	f.Before, f.After, f.Limit = 0, 0, 0
	where, args, err := db.jobFilterSQL(ctx, f)
	if err != nil {
		return atoll.LogSearchResult{}, err
	}
	query := `SELECT l.job_id, l.seq, l.stream, l.time, l.text FROM log_search s
		JOIN log_lines l ON l.job_id = s.rowid / ` + fmt.Sprint(logKey) + ` AND l.seq = s.rowid % ` + fmt.Sprint(logKey) + `
		WHERE log_search MATCH ?`
	qargs := []any{match}
	if before > 0 {
		query += ` AND s.rowid < ?`
		qargs = append(qargs, before*logKey)
	}
	if where != "1=1" {
		// Only a filter narrows the jobs first; without one, every job is.
		query += ` AND s.rowid / ` + fmt.Sprint(logKey) + ` IN (SELECT j.id` + jobFrom + `WHERE ` + where + `)`
		qargs = append(qargs, args...)
	}
	query += ` ORDER BY s.rowid DESC LIMIT ?`
	qargs = append(qargs, searchScan)
	rows, err := db.reader().QueryContext(ctx, query, qargs...)
	if err != nil {
		return atoll.LogSearchResult{}, fmt.Errorf("store search logs: %w", err)
	}
	defer rows.Close()
	res := atoll.LogSearchResult{Terms: terms}
	var ids []int64
	byJob := map[int64]*atoll.LogSearchHit{}
	scanned := 0
	for rows.Next() {
		var l atoll.LogLine
		var t int64
		if err := rows.Scan(&l.JobID, &l.Seq, &l.Stream, &t, &l.Text); err != nil {
			return atoll.LogSearchResult{}, fmt.Errorf("store search logs: %w", err)
		}
		scanned++
		l.Time = fromTS(t)
		h := byJob[l.JobID]
		if h == nil {
			if len(ids) == limit {
				res.Older = true
				break
			}
			h = &atoll.LogSearchHit{}
			byJob[l.JobID] = h
			ids = append(ids, l.JobID)
		}
		h.Matches++
		if len(h.Lines) < searchLines {
			h.Lines = append(h.Lines, l)
		} else {
			h.More = true
		}
	}
	if err := rows.Err(); err != nil {
		return atoll.LogSearchResult{}, fmt.Errorf("store search logs: %w", err)
	}
	if scanned == searchScan {
		res.Older = true
		if len(ids) > 0 {
			byJob[ids[len(ids)-1]].More = true
		}
	}
	if len(ids) == 0 {
		return res, nil
	}
	jobs, err := jobsWhere(ctx, db.reader(), `j.id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, anys(ids)...)
	if err != nil {
		return atoll.LogSearchResult{}, err
	}
	found := make(map[int64]*atoll.Job, len(jobs))
	for _, j := range jobs {
		found[j.ID] = j
	}
	for _, id := range ids {
		h := byJob[id]
		// Lines arrived newest first; show them in log order.
		for i, k := 0, len(h.Lines)-1; i < k; i, k = i+1, k-1 {
			h.Lines[i], h.Lines[k] = h.Lines[k], h.Lines[i]
		}
		if h.Job = found[id]; h.Job != nil {
			res.Hits = append(res.Hits, *h)
		}
	}
	return res, nil
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ExplainSearchLogs returns SQLite's query plan of a search (for tests).
func (db *DB) ExplainSearchLogs(ctx context.Context, q string) (string, error) {
	match, _, err := ParseSearch(q)
	if err != nil {
		return "", err
	}
	return db.explain(ctx, `SELECT l.job_id, l.seq FROM log_search s
		JOIN log_lines l ON l.job_id = s.rowid / `+fmt.Sprint(logKey)+` AND l.seq = s.rowid % `+fmt.Sprint(logKey)+`
		WHERE log_search MATCH ? ORDER BY s.rowid DESC LIMIT 2000`, match)
}

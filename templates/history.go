package templates

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/ansi"
)

// LockFilter is what the locks page's filter form holds, as typed.
type LockFilter struct {
	Repo, Pull, User, Older string
}

// LocksPage lists the locks matching a filter, to unlock some.
type LocksPage struct {
	Meta   Meta
	Filter LockFilter
	Locks  []*atoll.Lock
	// Total is the number of locks held, whatever the filter.
	Total int
	// Back is this page's own address, where an unlock comes back to.
	Back string
	// CanUnlock shows the checkboxes and buttons (operator and above).
	CanUnlock bool
	// NextURL is the page of the next locks ("" when none); FirstURL the
	// first page, when this is not it.
	NextURL, FirstURL string
}

// UnlockConfirmPage asks to confirm an unlock (the form posted without
// JavaScript, whose confirm dialog answers it otherwise).
type UnlockConfirmPage struct {
	Meta    Meta
	Locks   []*atoll.Lock
	Missing []int64 // ids asked for that are not held (any more)
	Back    string
}

// RunsFilter is what the runs page's filter form holds, as typed.
type RunsFilter struct {
	Repo, Pull, Project, Kind, State, User, From, To, Q string
}

// RunsPage is the history of every job, or a search of their logs.
type RunsPage struct {
	Meta   Meta
	Filter RunsFilter
	// Error says why the filter or search could not run (shown by the form).
	Error string
	// Jobs, when not searching.
	Jobs []*atoll.Job
	// OlderURL and NewerURL are the next pages' addresses ("" when none).
	OlderURL, NewerURL string
	// Search is set when Filter.Q is.
	Search *atoll.LogSearchResult
}

// JobKinds and JobStates fill the runs filter's choices.
var (
	JobKinds  = []string{atoll.JobPlan, atoll.JobApply, atoll.JobImport, atoll.JobStateRm}
	JobStates = []string{atoll.JobQueued, atoll.JobRunning, atoll.JobSucceeded, atoll.JobFailed, atoll.JobInterrupted, atoll.JobCanceled}
)

// RunsQuery is the query string of filter f with extra (cursor) pairs, for
// the runs page's links.
func RunsQuery(f RunsFilter, extra ...string) string {
	v := url.Values{}
	for _, kv := range [][2]string{{"repo", f.Repo}, {"pull", f.Pull}, {"project", f.Project}, {"kind", f.Kind},
		{"state", f.State}, {"user", f.User}, {"from", f.From}, {"to", f.To}, {"q", f.Q}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	if len(v) == 0 {
		return "/runs"
	}
	return "/runs?" + v.Encode()
}

// JobLinePath is a log line's place on its job's page.
func JobLinePath(jobID, seq int64) string {
	return paths.JobLine(jobID, seq)
}

// Piece is part of a search snippet; Match pieces are highlighted.
type Piece struct {
	Text  string
	Match bool
}

// snippetWidth bounds the characters of a line a search result shows.
const snippetWidth = 200

// Snippet cuts a log line to about snippetWidth characters around the first
// place one of terms appears, split into pieces with the matches marked.
// Matching ignores case and treats a phrase's spaces and punctuation
// loosely, as the index does; templ escapes every piece.
func Snippet(text string, terms []string) []Piece {
	text = ansi.Strip(text)
	re := termsPattern(terms)
	locs := [][]int(nil)
	if re != nil {
		// Whole words only, as the index matched them: not "plan" in
		// "tfplan".
		for _, l := range re.FindAllStringIndex(text, -1) {
			before, _ := utf8.DecodeLastRuneInString(text[:l[0]])
			after, _ := utf8.DecodeRuneInString(text[l[1]:])
			if !isWordRune(before) && !isWordRune(after) {
				locs = append(locs, l)
			}
		}
	}
	start, end := 0, len(text)
	if len(text) > snippetWidth {
		if len(locs) > 0 && locs[0][0] > snippetWidth/3 {
			start = locs[0][0] - snippetWidth/3
		}
		end = min(len(text), start+snippetWidth)
		for start > 0 && !utf8.RuneStart(text[start]) {
			start--
		}
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
	}
	var out []Piece
	if start > 0 {
		out = append(out, Piece{Text: "…"})
	}
	at := start
	for _, l := range locs {
		if l[1] <= at || l[0] >= end {
			continue
		}
		a, b := max(l[0], at), min(l[1], end)
		if a > at {
			out = append(out, Piece{Text: text[at:a]})
		}
		out = append(out, Piece{Text: text[a:b], Match: true})
		at = b
	}
	if at < end {
		out = append(out, Piece{Text: text[at:end]})
	}
	if end < len(text) {
		out = append(out, Piece{Text: "…"})
	}
	return out
}

// termsPattern matches any of the search terms, case-insensitively, with
// any run of non-word characters where a term has one.
func termsPattern(terms []string) *regexp.Regexp {
	var alts []string
	for _, t := range terms {
		words := strings.FieldsFunc(t, func(r rune) bool { return !isWordRune(r) })
		if len(words) == 0 {
			continue
		}
		for i, w := range words {
			words[i] = regexp.QuoteMeta(w)
		}
		alts = append(alts, strings.Join(words, `[^\pL\pN]+`))
	}
	if len(alts) == 0 {
		return nil
	}
	re, err := regexp.Compile(`(?i)(?:` + strings.Join(alts, "|") + `)`)
	if err != nil {
		return nil
	}
	return re
}

// isWordRune is what the index's unicode61 tokenizer keeps in a token.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// plural is "1 lock" or "3 locks".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// missingText lists lock ids for a confirmation page.
func missingText(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = "#" + strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

package vcs

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

var markerRE = regexp.MustCompile(`<!-- atoll:[^ >]* -->`)

// FitComment truncates body to at most limit characters (runes), as a
// host's comment size limit requires, ending it with a note naming host
// and keeping its markers, so that a truncated comment can still be found
// and hidden later.
func FitComment(body string, limit int, host string) string {
	if utf8.RuneCountInString(body) <= limit {
		return body
	}
	tail := "\n\n**Warning**: this comment was truncated to fit " + host + " size limit; the job log has the full output.\n" +
		strings.Join(markerRE.FindAllString(body, -1), "\n")
	keep := max(limit-utf8.RuneCountInString(tail), 0)
	cut := 0
	for i := range body {
		if keep == 0 {
			cut = i
			break
		}
		keep--
	}
	head := body[:cut]
	// An HTML comment left open would swallow the note.
	if open := strings.LastIndex(head, "<!--"); open > strings.LastIndex(head, "-->") {
		head = head[:open]
	}
	return head + tail
}

package markdown

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error renders a command that failed as a whole, e.g. "**Apply Failed**:
// the pull request is not approved".
func (r Renderer) Error(command, message, marker string) string {
	return r.single(fmt.Sprintf("**%s Failed**: %s\n", title(command), message), marker)
}

// Unlocked confirms an unlock comment.
func (r Renderer) Unlocked(n int, marker string) string {
	var body string
	switch n {
	case 0:
		body = "There were no locks or plans for this pull request to delete.\n"
	case 1:
		body = "Released the 1 lock held by this pull request and discarded its plan.\n"
	default:
		body = fmt.Sprintf("Released all %d locks held by this pull request and discarded their plans.\n", n)
	}
	body += fmt.Sprintf("\nComment %s to plan again.\n", code(r.exe()+" plan"))
	return marker + "\n" + body
}

// Closed reports the locks and plans dropped when a pull request closed;
// labels name the projects (see atoll.Project.Label).
func (r Renderer) Closed(labels []string, marker string) string {
	if len(labels) == 0 {
		return marker + "\nThis pull request is closed; it held no locks or plans.\n"
	}
	var b strings.Builder
	b.WriteString("Deleted the locks and plans this pull request held:\n\n")
	for _, l := range labels {
		fmt.Fprintf(&b, "- %s\n", code(l))
	}
	return r.single(b.String(), marker)
}

// single makes a one-piece comment, cutting body short if it is too long.
func (r Renderer) single(body, marker string) string {
	const cut = "\n\n_(message truncated)_\n"
	s := marker + "\n" + body
	if len(s) <= r.limit() {
		return s
	}
	n := max(len(marker)+1, r.limit()-len(cut))
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + cut
}

// UnlockedBy tells a pull request that user released its locks of the
// projects labelled labels (see atoll.Project.Label) from via ("the
// dashboard"), which discarded their plans.
func (r Renderer) UnlockedBy(user, via string, labels []string, marker string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Unlocked by %s from %s.** ", plainName(user), via)
	if len(labels) == 1 {
		fmt.Fprintf(&b, "Released this pull request's lock of %s and discarded its plan.\n", code(labels[0]))
	} else {
		b.WriteString("Released this pull request's locks of these projects and discarded their plans:\n\n")
		for _, l := range labels {
			fmt.Fprintf(&b, "- %s\n", code(l))
		}
	}
	fmt.Fprintf(&b, "\nComment %s to plan again.\n", code(r.exe()+" plan"))
	return r.single(b.String(), marker)
}

// plainName keeps a user name from being read as Markdown or HTML: only
// letters, digits and . _ - + @ : stay.
func plainName(s string) string {
	out := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-+@:", r) {
			return r
		}
		return -1
	}, s)
	if out == "" {
		return "someone"
	}
	return out
}

package markdown

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

const (
	continuedHeader = "*(continued, part %d of %d)*\n\n"
	continuedFooter = "\n*(continued in the next comment)*\n"
	// minContent is the least room a piece keeps for content, so splitting
	// always progresses.
	minContent = 64
	// maxWholeLine is the longest line moved whole to the next piece when
	// it does not fit in this one; a longer line is cut where the piece
	// fills up. Moving every line whole would leave up to a line's length
	// unused in each piece: a plan whose lines are a little longer than a
	// comment alternated full and nearly empty comments.
	maxWholeLine = 1024
)

// Split cuts body into comments of at most MaxCommentLen bytes, each starting
// with marker, filling each before starting the next. Cuts fall between
// lines, except in lines longer than maxWholeLine; a code fence or
// <details> block open at a cut is closed at the end of one piece and
// re-opened at the start of the next, so each piece renders on its own.
// Pieces after the first say which part they are. A limit too small for the
// marker, the part header and the re-opened blocks is raised to fit them.
func (r Renderer) Split(body, marker string) []string {
	limit := r.limit()
	if len(marker)+1+len(body) <= limit {
		return []string{marker + "\n" + body}
	}
	for digits := 1; ; digits++ {
		n := strings.Repeat("9", digits)
		reserve := len(marker) + 1 + len(fmt.Sprintf(continuedHeader, 0, 0)) - 2 + 2*len(n) + len(continuedFooter)
		parts := cut(body, limit, reserve)
		if len(fmt.Sprint(len(parts))) > digits {
			continue // the part numbers need more room than reserved
		}
		out := make([]string, len(parts))
		for i, p := range parts {
			var b strings.Builder
			b.WriteString(marker + "\n")
			if i > 0 {
				fmt.Fprintf(&b, continuedHeader, i+1, len(parts))
			}
			b.WriteString(p)
			if i < len(parts)-1 {
				b.WriteString(continuedFooter)
			}
			out[i] = b.String()
		}
		return out
	}
}

// cut splits body into pieces of at most limit-reserve bytes each.
func cut(body string, limit, reserve int) []string {
	lines := strings.SplitAfter(body, "\n")
	limit = max(limit, reserve+floor(lines))
	room := limit - reserve
	var (
		parts []string
		cur   strings.Builder
		st    blockState
		fresh = true // cur holds only re-opened blocks
	)
	flush := func() {
		if !strings.HasSuffix(cur.String(), "\n") {
			cur.WriteString("\n")
		}
		cur.WriteString(st.closing())
		parts = append(parts, cur.String())
		cur.Reset()
		cur.WriteString(st.opening())
		fresh = true
	}
	for i := 0; i < len(lines); {
		line := lines[i]
		next := st.after(line)
		closing := len(next.closing())
		if !strings.HasSuffix(line, "\n") {
			closing++
		}
		if cur.Len()+len(line)+closing <= room {
			cur.WriteString(line)
			st, fresh = next, false
			i++
			continue
		}
		// The line does not fit: n bytes of it would. A line that opens or
		// closes a block, or a short one, goes whole to the next piece.
		n := room - cur.Len() - len(st.closing()) - 1
		if !fresh && (!next.same(st) || len(line) <= maxWholeLine || n < minContent) {
			flush()
			continue
		}
		if !next.same(st) { // cannot happen: floor makes room for such lines
			cur.WriteString(line)
			st, fresh = next, false
			i++
			continue
		}
		// A long line: put as much as fits here, in the current block, and
		// the rest in the following pieces.
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		cur.WriteString(line[:n])
		lines[i] = line[n:]
		fresh = false
		flush()
	}
	if !fresh || len(parts) == 0 {
		if cur.Len() > 0 && !strings.HasSuffix(cur.String(), "\n") && st.closing() != "" {
			cur.WriteString("\n")
		}
		cur.WriteString(st.closing())
		parts = append(parts, cur.String())
	}
	return parts
}

// floor is the least room a piece needs: enough to re-open and close the
// blocks open at any point with minContent bytes between them, and to hold
// whole any line that opens or closes a block, as such lines cannot be cut.
func floor(lines []string) int {
	var st blockState
	least := minContent
	for _, l := range lines {
		next := st.after(l)
		least = max(least, len(next.opening())+len(next.closing())+1+minContent)
		if !next.same(st) {
			least = max(least, len(st.opening())+len(l)+len(next.closing())+1)
		}
		st = next
	}
	return least
}

// blockState is what is open at a point of a body: <details> blocks and,
// innermost, a code fence.
type blockState struct {
	details []string // the lines that opened them
	fence   string   // the fence's backticks or tildes, "" outside code
	info    string   // the line that opened the fence
}

// after is the state after line.
func (s blockState) after(line string) blockState {
	t := strings.TrimSpace(line)
	if s.fence != "" {
		if strings.HasPrefix(t, s.fence) && strings.Trim(t, s.fence[:1]) == "" {
			s.fence, s.info = "", ""
		}
		return s
	}
	if f := fenceRun(t); f != "" {
		s.fence, s.info = f, strings.TrimRight(line, "\n")
		return s
	}
	for range strings.Count(t, "<details") {
		s.details = append(s.details[:len(s.details):len(s.details)], t)
	}
	for range strings.Count(t, "</details>") {
		if len(s.details) > 0 {
			s.details = s.details[:len(s.details)-1]
		}
	}
	return s
}

// fenceRun returns the fence that line t opens, if any. A backtick fence's
// info string cannot contain backticks: "```x```" is inline code.
func fenceRun(t string) string {
	for _, c := range "`~" {
		n := len(t) - len(strings.TrimLeft(t, string(c)))
		if n >= 3 && (c == '~' || !strings.Contains(t[n:], "`")) {
			return t[:n]
		}
	}
	return ""
}

func (s blockState) same(o blockState) bool {
	return s.fence == o.fence && s.info == o.info && slices.Equal(s.details, o.details)
}

// opening re-opens the state's blocks at the start of a piece.
func (s blockState) opening() string {
	var b strings.Builder
	for _, d := range s.details {
		b.WriteString(d + "\n\n")
	}
	if s.fence != "" {
		b.WriteString(s.info + "\n")
	}
	return b.String()
}

// closing closes the state's blocks at the end of a piece.
func (s blockState) closing() string {
	var b strings.Builder
	if s.fence != "" {
		b.WriteString(s.fence + "\n")
	}
	for range s.details {
		b.WriteString("</details>\n")
	}
	return b.String()
}

package templates

import (
	"regexp"
	"strings"
)

// Comment bodies are the Markdown Atoll posts on pull requests (Atlantis
// style: headings, lists, ``` fences and <details> sections) plus whatever
// people type. They are shown with a deliberately small renderer: the body
// is split into blocks whose text templ escapes. No HTML from a comment ever
// reaches the page; <details>, <summary> and <br> are recognised by their
// exact spelling and anything else that looks like HTML is shown as text.

// Block is one block of a rendered comment.
type Block struct {
	Kind     string   // "p", "h", "ul", "code", "details", "hr"
	Spans    []Span   // p, h
	Items    [][]Span // ul
	Code     string   // code
	Lang     string   // code: the fence's info string
	Summary  []Span   // details
	Children []Block  // details
}

// Span is a run of inline text.
type Span struct {
	Text string
	Code bool
	Bold bool
	Link string // a [text](url) link; templ sanitizes the URL
}

// maxDepth bounds nested <details>; deeper ones are shown as text.
const maxDepth = 16

// maxBody bounds the bodies parsed; longer ones are shown verbatim.
const maxBody = 256 << 10

// ParseComment splits a Markdown comment body into blocks.
func ParseComment(body string) []Block {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	if len(body) > maxBody {
		return []Block{{Kind: "code", Code: body}}
	}
	p := &mdParser{lines: strings.Split(body, "\n")}
	return p.blocks(0)
}

type mdParser struct {
	lines []string
	i     int
}

var (
	headingLine  = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	listLine     = regexp.MustCompile(`^\s{0,3}[*-]\s+(.*)$`)
	hrLine       = regexp.MustCompile(`^\s{0,3}(?:-{3,}|\*{3,}|_{3,})\s*$`)
	htmlComment  = regexp.MustCompile(`^<!--.*-->$`)
	brTag        = regexp.MustCompile(`<br\s*/?>`)
	summaryStyle = strings.NewReplacer("<b>", "", "</b>", "", "<strong>", "", "</strong>", "", "<code>", "`", "</code>", "`")
)

// blocks parses until the end or, inside a <details> (depth > 0), its
// closing tag, which it consumes.
func (p *mdParser) blocks(depth int) []Block {
	var out []Block
	var para []string
	var items [][]Span
	flush := func() {
		if len(para) > 0 {
			out = append(out, Block{Kind: "p", Spans: inline(strings.Join(para, "\n"))})
			para = nil
		}
		if len(items) > 0 {
			out = append(out, Block{Kind: "ul", Items: items})
			items = nil
		}
	}
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		t := strings.TrimSpace(line)
		p.i++
		switch {
		case strings.HasPrefix(t, "```"):
			flush()
			out = append(out, p.fence(line, strings.TrimSpace(strings.TrimLeft(t, "`"))))
		case depth > 0 && strings.HasPrefix(t, "</details>"):
			if rest := strings.TrimSpace(strings.TrimPrefix(t, "</details>")); rest != "" {
				p.i--
				p.lines[p.i] = rest
			}
			flush()
			return out
		case depth < maxDepth && isDetails(t):
			flush()
			rest, _ := cutDetails(t)
			out = append(out, p.details(rest, depth+1))
		case t == "":
			flush()
		case htmlComment.MatchString(t):
			// Invisible on the VCS too (e.g. markers); skip.
		case hrLine.MatchString(t):
			flush()
			out = append(out, Block{Kind: "hr"})
		case headingLine.MatchString(t):
			flush()
			out = append(out, Block{Kind: "h", Spans: inline(headingLine.FindStringSubmatch(t)[1])})
		case listLine.MatchString(line):
			if len(para) > 0 {
				flush()
			}
			items = append(items, inline(listLine.FindStringSubmatch(line)[1]))
		default:
			if len(items) > 0 {
				flush()
			}
			para = append(para, brTag.ReplaceAllString(strings.TrimRight(line, " \t"), "\n"))
		}
	}
	flush()
	return out
}

// fence reads a ``` block whose opening line was open.
func (p *mdParser) fence(open, lang string) Block {
	t := strings.TrimSpace(open)
	marker := t[:len(t)-len(strings.TrimLeft(t, "`"))]
	var code []string
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		p.i++
		if t := strings.TrimSpace(line); strings.HasPrefix(t, marker) && strings.Trim(t, "`") == "" {
			break
		}
		code = append(code, line)
	}
	if i := strings.IndexAny(lang, " \t{"); i >= 0 {
		lang = lang[:i]
	}
	return Block{Kind: "code", Lang: lang, Code: strings.Join(code, "\n")}
}

// details reads a <details> section; rest is what followed the opening tag
// on its line (often the <summary>).
func (p *mdParser) details(rest string, depth int) Block {
	b := Block{Kind: "details"}
	if rest == "" && p.i < len(p.lines) {
		if _, _, ok := cutSummary(strings.TrimSpace(p.lines[p.i])); ok {
			rest = strings.TrimSpace(p.lines[p.i])
			p.i++
		}
	}
	if summary, after, ok := cutSummary(rest); ok {
		b.Summary = inline(summaryStyle.Replace(summary))
		rest = after
	}
	if len(b.Summary) == 0 {
		b.Summary = []Span{{Text: "Details"}}
	}
	if rest != "" {
		// Text after the tags on the opening line: parse it as a line of
		// the section.
		p.i--
		p.lines[p.i] = rest
	}
	b.Children = p.blocks(depth)
	return b
}

// The tags are matched by hand rather than with regular expressions: a
// line such as "<details></details><details></details>…" is re-read once per
// tag, so each match must cost only the tag's length.

func isDetails(t string) bool { _, ok := cutDetails(t); return ok }

// cutDetails matches "<details>" or "<details open>" at the start of t and
// returns what follows.
func cutDetails(t string) (string, bool) {
	s, ok := strings.CutPrefix(t, "<details")
	if !ok {
		return "", false
	}
	if trimmed := strings.TrimLeft(s, " \t"); len(trimmed) < len(s) {
		s = strings.TrimLeft(strings.TrimPrefix(trimmed, "open"), " \t")
	}
	s, ok = strings.CutPrefix(s, ">")
	return strings.TrimLeft(s, " \t"), ok
}

// cutSummary matches "<summary>…</summary>" at the start of t.
func cutSummary(t string) (summary, rest string, ok bool) {
	s, ok := strings.CutPrefix(t, "<summary>")
	if !ok {
		return "", "", false
	}
	i := strings.Index(s, "</summary>")
	if i < 0 {
		return "", "", false
	}
	return s[:i], strings.TrimLeft(s[i+len("</summary>"):], " \t"), true
}

// inline splits text into plain, `code` and **bold** spans. Delimiters
// that found no closing match are remembered, so that each search for them
// runs once: the work stays near-linear whatever the text.
func inline(s string) []Span {
	var out []Span
	var plain strings.Builder
	emit := func(sp Span) {
		if plain.Len() > 0 {
			out = append(out, Span{Text: emoji.Replace(plain.String())})
			plain.Reset()
		}
		if sp.Text != "" {
			out = append(out, sp)
		}
	}
	unclosed := map[int]bool{} // backtick run lengths with no closing run
	noBold := false
	for len(s) > 0 {
		switch {
		case s[0] == '`':
			n := len(s) - len(strings.TrimLeft(s, "`"))
			if !unclosed[n] {
				if end := strings.Index(s[n:], s[:n]); end >= 0 {
					emit(Span{Text: strings.TrimSpace(s[n : n+end]), Code: true})
					s = s[n+end+n:]
					continue
				}
				unclosed[n] = true
			}
			plain.WriteString(s[:n])
			s = s[n:]
		case strings.HasPrefix(s, "**") && !noBold:
			if end := strings.Index(s[2:], "**"); end > 0 {
				emit(Span{Text: emoji.Replace(s[2 : 2+end]), Bold: true})
				s = s[2+end+2:]
				continue
			} else if end < 0 {
				noBold = true
			}
			plain.WriteString("**")
			s = s[2:]
		case s[0] == '[':
			if text, link, n := cutLink(s); n > 0 {
				emit(Span{Text: emoji.Replace(text), Link: link})
				s = s[n:]
				continue
			}
			plain.WriteByte('[')
			s = s[1:]
		default:
			i := strings.IndexAny(s[1:], "`*[")
			if i < 0 {
				plain.WriteString(s)
				s = ""
			} else {
				plain.WriteString(s[:1+i])
				s = s[1+i:]
			}
		}
	}
	emit(Span{})
	return out
}

// cutLink matches a Markdown link [text](url) at the start of s and returns
// its parts and length. Text and URL are short and on one line; only
// http(s) and site-relative URLs make links.
func cutLink(s string) (text, link string, n int) {
	end := strings.IndexAny(s[1:min(len(s), 256)], "]\n")
	if end < 0 || s[1+end] != ']' || !strings.HasPrefix(s[1+end:], "](") {
		return "", "", 0
	}
	text, rest := s[1:1+end], s[1+end+2:]
	stop := strings.IndexAny(rest[:min(len(rest), 2048)], ") \n")
	if stop < 0 || rest[stop] != ')' || text == "" {
		return "", "", 0
	}
	link = rest[:stop]
	lower := strings.ToLower(link)
	if !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") &&
		!(strings.HasPrefix(link, "/") && !strings.HasPrefix(link, "//")) {
		return "", "", 0
	}
	return text, link, 1 + end + 2 + stop + 1
}

// emoji maps the GitHub shortcodes Atlantis-style comments use.
var emoji = strings.NewReplacer(
	":arrow_forward:", "▶️",
	":put_litter_in_its_place:", "🚮",
	":repeat:", "🔁",
	":warning:", "⚠️",
	":x:", "❌",
	":heavy_check_mark:", "✔️",
	":white_check_mark:", "✅",
	":lock:", "🔒",
	":unlock:", "🔓",
	":no_entry_sign:", "🚫",
	":information_source:", "ℹ️",
	":fast_forward:", "⏩",
)

// diffClass colours a line of a ```diff block by its leading marker.
func diffClass(line string) string {
	switch t := strings.TrimLeft(line, " "); {
	case strings.HasPrefix(t, "~"), strings.HasPrefix(t, "-/+"), strings.HasPrefix(t, "+/-"):
		return "d-chg"
	case strings.HasPrefix(t, "+"):
		return "d-add"
	case strings.HasPrefix(t, "-"):
		return "d-del"
	}
	return ""
}

// codeLines splits a code block for per-line styling, keeping newlines.
func codeLines(code string) []string { return strings.SplitAfter(code, "\n") }

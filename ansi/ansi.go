// Package ansi turns a line of terminal output, as Terraform prints it,
// into text segments with the colours of its SGR escape sequences, and
// strips every other escape sequence. The job page renders stored lines
// with it; assets/live.js does the same for live ones.
package ansi

import (
	"strconv"
	"strings"
)

// Segment is a run of text with one style. Classes are CSS class names:
// "b" (bold), "dim", "i" (italic), "u" (underline), "fg-<colour>" and
// "bg-<colour>", colours being black, red, green, yellow, blue, magenta,
// cyan, white and their bright- variants.
type Segment struct {
	Text    string
	Classes []string
}

var colours = [8]string{"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"}

type style struct {
	bold, dim, italic, underline bool
	fg, bg                       string
}

func (s style) classes() []string {
	var c []string
	if s.bold {
		c = append(c, "b")
	}
	if s.dim {
		c = append(c, "dim")
	}
	if s.italic {
		c = append(c, "i")
	}
	if s.underline {
		c = append(c, "u")
	}
	if s.fg != "" {
		c = append(c, "fg-"+s.fg)
	}
	if s.bg != "" {
		c = append(c, "bg-"+s.bg)
	}
	return c
}

// apply changes s by the parameters of one SGR sequence (ESC [ ... m).
func (s *style) apply(params string) {
	if params == "" {
		*s = style{}
		return
	}
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		n, err := strconv.Atoi(ps[i])
		if err != nil && ps[i] != "" {
			continue
		}
		switch {
		case n == 0:
			*s = style{}
		case n == 1:
			s.bold = true
		case n == 2:
			s.dim = true
		case n == 3:
			s.italic = true
		case n == 4:
			s.underline = true
		case n == 22:
			s.bold, s.dim = false, false
		case n == 23:
			s.italic = false
		case n == 24:
			s.underline = false
		case n >= 30 && n <= 37:
			s.fg = colours[n-30]
		case n == 39:
			s.fg = ""
		case n >= 40 && n <= 47:
			s.bg = colours[n-40]
		case n == 49:
			s.bg = ""
		case n >= 90 && n <= 97:
			s.fg = "bright-" + colours[n-90]
		case n >= 100 && n <= 107:
			s.bg = "bright-" + colours[n-100]
		case n == 38 || n == 48:
			// 256-colour and true colour: not rendered; skip their
			// arguments (5;N or 2;R;G;B).
			if i+1 < len(ps) && ps[i+1] == "5" {
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == "2" {
				i += 4
			}
		}
	}
}

// Parse splits line into styled segments. Escape sequences are consumed:
// SGR ones set the style, others (cursor movement, OSC titles and links)
// are dropped, as are other control characters but tab.
func Parse(line string) []Segment {
	if !needsWork(line) {
		if line == "" {
			return nil
		}
		return []Segment{{Text: line}}
	}
	var out []Segment
	var cur style
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, Segment{Text: text.String(), Classes: cur.classes()})
			text.Reset()
		}
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == 0x1b:
			final, params, next := escape(line, i)
			if final == 'm' {
				flush()
				cur.apply(params)
			}
			i = next
		case c < 0x20 && c != '\t', c == 0x7f:
			i++ // other control characters
		default:
			text.WriteByte(c)
			i++
		}
	}
	flush()
	return out
}

// Strip returns line without escape sequences and control characters.
func Strip(line string) string {
	if !needsWork(line) {
		return line
	}
	return string(AppendStripped(nil, line))
}

// AppendStripped appends line without escape sequences and control
// characters to dst: a download strips every line into one buffer.
func AppendStripped(dst []byte, line string) []byte {
	if !needsWork(line) {
		return append(dst, line...)
	}
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == 0x1b:
			_, _, i = escape(line, i)
		case c < 0x20 && c != '\t', c == 0x7f:
			i++
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

func needsWork(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return true
		}
	}
	return false
}

// StripEscapes returns s without its escape sequences. Unlike Strip it
// keeps every other control character: Terraform's output is stored so.
func StripEscapes(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return string(AppendEscapesStripped(make([]byte, 0, len(s)), s))
}

// AppendEscapesStripped appends b without its escape sequences (but with
// its other control characters) to dst. An unterminated sequence drops
// the rest of b.
func AppendEscapesStripped[T string | []byte](dst []byte, b T) []byte {
	for i := 0; i < len(b); {
		if b[i] != 0x1b {
			dst = append(dst, b[i])
			i++
			continue
		}
		n := EscapeLen(b[i:])
		if n < 0 {
			break
		}
		i += n
	}
	return dst
}

// EscapeLen returns the length of the escape sequence at the start of b
// (which begins with ESC), or -1 if b ends before the sequence does: a CSI
// sequence ends with its final byte, an OSC one with BEL or ESC \, any
// other is two bytes.
func EscapeLen[T string | []byte](b T) int {
	if len(b) < 2 {
		return -1
	}
	switch b[1] {
	case '[': // CSI: parameters and intermediates, then a final byte @..~
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				return i + 1
			}
		}
		return -1
	case ']': // OSC: up to BEL or ESC \
		for i := 2; i < len(b); i++ {
			if b[i] == 0x07 {
				return i + 1
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
		}
		return -1
	default: // a two-byte sequence (ESC =, ESC 7, ...)
		return 2
	}
}

// escape reads the escape sequence at line[i] (ESC): its final byte for a
// CSI sequence ('m' for SGR, 0 otherwise), its parameters, and where the
// text after it starts (the end of line for an unterminated sequence).
func escape(line string, i int) (final byte, params string, next int) {
	n := EscapeLen(line[i:])
	switch {
	case n < 0:
		return 0, "", len(line)
	case line[i+1] == '[':
		return line[i+n-1], line[i+2 : i+n-1], i + n
	default:
		return 0, "", i + n
	}
}

// Diff classifies a line of a Terraform plan by its change marker, after
// indentation: "add" (+), "change" (~), "destroy" (-), "replace" (-/+ or
// +/-), "read" (<=), or "" for any other line. line must be stripped.
// Terraform indents every +, ~ and - of a plan; at the start of the line
// they are list bullets ("- Installing hashicorp/aws v5.0.0..." of
// terraform init), not changes.
func Diff(line string) string {
	t := strings.TrimLeft(line, " \t")
	indented := len(t) < len(line)
	for _, m := range diffMarkers {
		if rest, ok := strings.CutPrefix(t, m.prefix); ok && (rest == "" || rest[0] == ' ') {
			if len(m.prefix) == 1 && !indented {
				return ""
			}
			return m.class
		}
	}
	return ""
}

var diffMarkers = []struct{ prefix, class string }{
	{"-/+", "replace"}, {"+/-", "replace"}, {"<=", "read"}, {"+", "add"}, {"~", "change"}, {"-", "destroy"},
}

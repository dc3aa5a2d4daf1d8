package markdown

import (
	"strings"
)

// details writes text in a collapsed, fenced block; with DisableFolding,
// in the fenced block alone.
func (r Renderer) details(b *strings.Builder, lang, text string) {
	if r.DisableFolding {
		fenced(b, lang, text)
		return
	}
	b.WriteString("<details><summary>Show Output</summary>\n\n")
	fenced(b, lang, text)
	b.WriteString("</details>\n")
}

// fenced writes text as a code block whose fence is longer than any run of
// backticks starting a line of text, so the text cannot close it early.
func fenced(b *strings.Builder, lang, text string) {
	fence := fenceFor(text)
	b.WriteString(fence + lang + "\n")
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(fence + "\n")
}

func fenceFor(text string) string {
	longest := 0
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimLeft(line, " ")
		longest = max(longest, len(t)-len(strings.TrimLeft(t, "`")))
	}
	return strings.Repeat("`", max(3, longest+1))
}

// code formats s as inline code, with enough backticks to hold any in s.
func code(s string) string {
	run, longest := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	ticks := strings.Repeat("`", longest+1)
	return ticks + " " + s + " " + ticks
}

// diffSigns moves terraform's indented change markers to the start of the
// line, where GitHub's diff highlighting looks for them.
func diffSigns(output string) string {
	lines := strings.Split(output, "\n")
	for i, line := range lines {
		rest := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(rest)]
		if indent == "" {
			continue
		}
		for _, sign := range []string{"-/+ ", "+/- ", "+ ", "- ", "~ "} {
			if strings.HasPrefix(rest, sign) {
				lines[i] = sign[:len(sign)-1] + indent + rest[len(sign)-1:]
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// inline makes user text (an approval's reason) safe on one line of a
// comment: line breaks become spaces and markdown and HTML characters are
// escaped, so it cannot add headings, links, mentions or markup.
func inline(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune("\\`*_{}[]()<>#+-!|~@&", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

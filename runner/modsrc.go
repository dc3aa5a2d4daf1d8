package runner

import (
	"encoding/json"
	"fmt"
	"strings"
)

// moduleSources returns the source of every module block in a .tf file. It
// is a light scan of HCL's syntax (comments, strings, templates, heredocs,
// nesting), not a parser: anything it cannot read for sure, such as a
// source that is not a plain string, is an error, and the caller then does
// not skip init.
func moduleSources(src []byte) ([]string, error) {
	toks, err := lexHCL(string(src))
	if err != nil {
		return nil, err
	}
	var out []string
	depth := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case '{', '[', '(':
			depth++
			continue
		case '}', ']', ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced %q", t.kind)
			}
			continue
		}
		if depth != 0 || t.kind != tIdent || t.text != "module" || (i > 0 && toks[i-1].kind != tNewline) {
			continue
		}
		// module "name" {   (the label may also be a bare identifier)
		if i+2 >= len(toks) || (toks[i+1].kind != tString && toks[i+1].kind != tIdent) || toks[i+2].kind != '{' {
			continue // an attribute named module, or not a block we know
		}
		source, end, err := blockSource(toks, i+2)
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", toks[i+1].text, err)
		}
		out = append(out, source)
		i = end
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced braces")
	}
	return out, nil
}

// blockSource reads the body of the block opened at toks[open] and returns
// its source attribute and the index of the closing brace.
func blockSource(toks []token, open int) (string, int, error) {
	depth, source, found := 0, "", false
	for i := open; i < len(toks); i++ {
		switch toks[i].kind {
		case '{', '[', '(':
			depth++
		case '}', ']', ')':
			depth--
			if depth == 0 {
				if !found {
					return "", 0, fmt.Errorf("no source")
				}
				return source, i, nil
			}
		case tIdent:
			if depth != 1 || toks[i].text != "source" || toks[i-1].kind != tNewline && toks[i-1].kind != '{' {
				continue
			}
			if i+3 >= len(toks) || toks[i+1].kind != '=' {
				continue
			}
			v, next := toks[i+2], toks[i+3].kind
			if v.kind != tString || v.template || (next != tNewline && next != '}') {
				return "", 0, fmt.Errorf("source is not a plain string")
			}
			source, found = v.text, true
		}
	}
	return "", 0, fmt.Errorf("unterminated block")
}

const (
	tIdent   = 'a'
	tString  = '"'
	tNewline = '\n'
	tOther   = '?'
)

type token struct {
	kind     rune
	text     string
	template bool // a string with ${ }, %{ } or escapes: not a literal
}

// lexHCL splits HCL into the tokens moduleSources needs. Everything inside
// strings, comments and heredocs is opaque, so braces there do not count.
func lexHCL(s string) ([]token, error) {
	toks := []token{{kind: tNewline}}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			toks = append(toks, token{kind: tNewline})
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' || (c == '/' && i+1 < len(s) && s[i+1] == '/'):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment")
			}
			// A comment spanning lines still ends a line for our purpose.
			if strings.Contains(s[i:i+2+end], "\n") {
				toks = append(toks, token{kind: tNewline})
			}
			i += end + 4
		case c == '"':
			text, template, n, err := lexString(s[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, text: text, template: template})
			i += n
		case c == '<' && strings.HasPrefix(s[i:], "<<"):
			n, err := skipHeredoc(s[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tOther})
			i += n
		case c == '_' || c == '-' || isLetter(c) || isDigit(c):
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '-' || s[j] == '.' || isLetter(s[j]) || isDigit(s[j])) {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: s[i:j]})
			i = j
		case strings.ContainsRune("{}[]()=", rune(c)):
			if c == '=' && i+1 < len(s) && (s[i+1] == '=' || s[i+1] == '>') {
				toks = append(toks, token{kind: tOther})
				i += 2
				continue
			}
			toks = append(toks, token{kind: rune(c)})
			i++
		default:
			toks = append(toks, token{kind: tOther})
			i++
		}
	}
	return append(toks, token{kind: tNewline}), nil
}

// lexString reads a quoted template starting at s[0] == '"', skipping
// interpolations (which may hold strings and braces of their own).
func lexString(s string) (text string, template bool, n int, err error) {
	var b strings.Builder
	for i := 1; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			return b.String(), template, i + 1, nil
		case c == '\n':
			return "", false, 0, fmt.Errorf("newline in string")
		case c == '\\':
			template = true
			i += 2
		case (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{':
			template = true
			end, err := skipInterpolation(s[i+2:])
			if err != nil {
				return "", false, 0, err
			}
			i += 2 + end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", false, 0, fmt.Errorf("unterminated string")
}

// skipInterpolation returns the length up to and including the } that
// closes an interpolation whose body starts at s[0].
func skipInterpolation(s string) (int, error) {
	depth := 1
	for i := 0; i < len(s); {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		case '"':
			_, _, n, err := lexString(s[i:])
			if err != nil {
				return 0, err
			}
			i += n
			continue
		}
		i++
	}
	return 0, fmt.Errorf("unterminated interpolation")
}

// skipHeredoc returns the length of a <<ID or <<-ID heredoc through its
// closing line.
func skipHeredoc(s string) (int, error) {
	i := 2
	if i < len(s) && s[i] == '-' {
		i++
	}
	j := i
	for j < len(s) && (s[j] == '_' || isLetter(s[j]) || isDigit(s[j])) {
		j++
	}
	id := s[i:j]
	nl := strings.IndexByte(s[j:], '\n')
	if id == "" || nl < 0 || strings.TrimSpace(s[j:j+nl]) != "" {
		return 0, fmt.Errorf("unreadable heredoc")
	}
	for pos := j + nl + 1; pos <= len(s); {
		end := strings.IndexByte(s[pos:], '\n')
		line := s[pos:]
		if end >= 0 {
			line = s[pos : pos+end]
		}
		if strings.TrimSpace(line) == id {
			// Leave the newline to end the line for the caller.
			return pos + len(line), nil
		}
		if end < 0 {
			break
		}
		pos += end + 1
	}
	return 0, fmt.Errorf("unterminated heredoc %s", id)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// moduleSourcesJSON returns the module sources of a .tf.json file, whose
// "module" may be an object of blocks or a list of such objects, and each
// block an object or a list of objects.
func moduleSourcesJSON(src []byte) ([]string, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	raw, ok := doc["module"]
	if !ok {
		return nil, nil
	}
	var out []string
	var blocks func(v any) error
	body := func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("unexpected module block")
		}
		s, ok := m["source"].(string)
		if !ok || strings.Contains(s, "${") || strings.Contains(s, "%{") {
			return fmt.Errorf("source is not a plain string")
		}
		out = append(out, s)
		return nil
	}
	blocks = func(v any) error {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if err := blocks(e); err != nil {
					return err
				}
			}
		case map[string]any:
			for _, b := range x {
				list, isList := b.([]any)
				if !isList {
					list = []any{b}
				}
				for _, e := range list {
					if err := body(e); err != nil {
						return err
					}
				}
			}
		default:
			return fmt.Errorf("unexpected module value")
		}
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return out, blocks(v)
}

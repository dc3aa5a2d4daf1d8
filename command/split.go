package command

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/atollhq/atoll"
)

// SplitWords splits s into words the way a POSIX shell would, without
// expanding or executing anything:
//
//   - unquoted whitespace (any Unicode space, since pasted comments often
//     carry no-break spaces) separates words;
//   - a backslash outside quotes makes the next character literal, and a
//     backslash-newline pair is removed;
//   - single quotes keep everything up to the next single quote literally;
//   - inside double quotes a backslash escapes only `"`, `\`, `$`, "`" and
//     newline, and is kept literally before any other character;
//   - an empty pair of quotes is an empty word; adjacent pieces join.
//
// Everything else, including ";", "|", "$(...)", backticks and "#", is
// ordinary text. Invalid UTF-8 bytes are copied through unchanged. An
// unterminated quote or a trailing backslash is an *atoll.Error (EINVALID).
func SplitWords(s string) ([]string, error) {
	var (
		words  []string
		word   strings.Builder
		inWord bool // distinguishes an empty quoted word from no word
	)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\':
			if i+1 >= len(s) {
				return nil, atoll.Errorf(atoll.EINVALID, "unfinished escape: a backslash ends the input")
			}
			_, n := utf8.DecodeRuneInString(s[i+1:])
			if s[i+1] != '\n' {
				word.WriteString(s[i+1 : i+1+n])
				inWord = true
			}
			i += 1 + n
		case r == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, atoll.Errorf(atoll.EINVALID, "unterminated single quote")
			}
			word.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case r == '"':
			n, err := readDoubleQuoted(s[i+1:], &word)
			if err != nil {
				return nil, err
			}
			inWord = true
			i += 1 + n
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
			i += size
		default:
			word.WriteString(s[i : i+size])
			inWord = true
			i += size
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// readDoubleQuoted copies the body of a double-quoted string starting just
// after the opening quote into w and returns how many bytes it consumed,
// closing quote included.
func readDoubleQuoted(s string, w *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return 0, atoll.Errorf(atoll.EINVALID, "unterminated double quote")
			}
			switch next := s[i+1]; next {
			case '"', '\\', '$', '`':
				w.WriteByte(next)
				i++
			case '\n':
				i++
			default:
				w.WriteByte(c) // literal backslash; next byte is copied next round
			}
		default:
			w.WriteByte(c)
		}
	}
	return 0, atoll.Errorf(atoll.EINVALID, "unterminated double quote")
}

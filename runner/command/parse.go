package command

import (
	"strings"
	"unicode"

	"github.com/atollhq/atoll"
)

// Parse parses a pull request comment.
//
// It returns (nil, nil) when the comment is not addressed to Atoll, which
// should then be ignored silently. When the comment is addressed to Atoll
// but cannot be run, it returns (nil, err) with err an *atoll.Error of code
// atoll.EINVALID whose Message is a Markdown reply: the problem followed by
// the relevant usage. "<command> --help" is answered the same way, with the
// command's usage as the message, since it too is replied to and not run.
func (p Parser) Parse(comment string) (*Command, error) {
	text := strings.TrimSpace(comment)
	if text == "" || strings.ContainsAny(text, "\r\n") {
		return nil, nil // multi-line comments are never commands; see the package doc
	}
	first, rest := cutWord(text)
	if !p.isPrefix(first) {
		return nil, nil
	}
	args, err := SplitWords(rest)
	if err != nil {
		return nil, p.usageError("", "cannot parse the command: %s", atoll.ErrorMessage(err))
	}
	if len(args) == 0 {
		return nil, p.usageError("", "missing command")
	}
	name, args := args[0], args[1:]
	switch name {
	case Plan, Apply:
		return p.parsePlanApply(name, args)
	case Unlock, Version:
		return p.parseNoArgs(name, args)
	case Help, "-h", "--help":
		return p.parseNoArgs(Help, args)
	}
	if Name(strings.ToLower(name)).Known() {
		return nil, p.usageError("", "unknown command %s: commands are lowercase, as in %q", quote(name), strings.ToLower(name))
	}
	return nil, p.usageError("", "unknown command %s", quote(name))
}

// cutWord splits off the first whitespace-separated word of s, which has no
// leading whitespace.
func cutWord(s string) (word, rest string) {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// isPrefix reports whether word addresses Atoll. The match ignores case, as
// VCS user names do; a configured name may be given with or without "@".
func (p Parser) isPrefix(word string) bool {
	if strings.EqualFold(word, p.executable()) || strings.EqualFold(word, "atoll") {
		return true
	}
	user := strings.TrimPrefix(p.VCSUser, "@")
	return user != "" && strings.EqualFold(word, "@"+user)
}

// parseNoArgs handles the commands that take neither flags nor arguments.
func (p Parser) parseNoArgs(name string, args []string) (*Command, error) {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			return nil, p.helpReply(name)
		}
	}
	if len(args) > 0 {
		return nil, p.usageError(name, "%s takes no flags or arguments, got %s", name, quote(args[0]))
	}
	return &Command{Name: name}, nil
}

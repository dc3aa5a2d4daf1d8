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
// "help", "-h", "--help" and the bare prefix parse as the help command.
func (p Parser) Parse(comment string) (*Command, error) {
	// Backticks around the command come from copying it out of a code
	// span (GitLab, Slack); Atlantis drops them too.
	text := strings.Trim(strings.TrimSpace(comment), "`")
	text = strings.TrimSpace(text)
	if text == "" || strings.ContainsAny(text, "\r\n") {
		return nil, nil // multi-line comments are never commands; see the package doc
	}
	first, rest := cutWord(text)
	if !p.isPrefix(first) {
		if hint := p.didYouMean(first); hint != "" {
			return nil, &atoll.Error{Code: atoll.EINVALID, Message: hint}
		}
		return nil, nil
	}
	args, err := SplitWords(rest)
	if err != nil {
		return nil, p.usageError("", "cannot parse the command: %s", atoll.ErrorMessage(err))
	}
	if len(args) == 0 {
		return &Command{Name: Help}, nil // the prefix alone asks for help, as in Atlantis
	}
	// Commands are matched in lower case: phone keyboards capitalise the
	// first word they see.
	name, args := strings.ToLower(args[0]), args[1:]
	switch name {
	case Help, "-h", "--help":
		// Anything after help is ignored, as in Atlantis: it still asks for
		// help. The words are kept so the reply can say they were ignored.
		cmd := &Command{Name: Help}
		if len(args) > 0 {
			cmd.Args = args
		}
		return cmd, nil
	}
	if !p.Allowed(name) {
		return nil, p.unknownCommand(name)
	}
	switch name {
	case Unlock, Cancel:
		return p.parseNoArgs(name, args)
	}
	return p.parseFlags(name, args)
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
	for _, name := range []string{p.executable(), "atoll", "run"} {
		if strings.EqualFold(word, name) {
			return true
		}
	}
	user := strings.TrimPrefix(p.VCSUser, "@")
	return user != "" && strings.EqualFold(word, "@"+user)
}

// didYouMean answers a comment that starts with "terraform" or with a
// misspelling of the default executable name, as Atlantis does; "" for
// anything else. A custom executable name gets no spelling hints: servers
// with different names may share a repository.
func (p Parser) didYouMean(word string) string {
	lower := strings.ToLower(word)
	exe := p.executable()
	if lower == "terraform" && exe != "terraform" {
		return "Did you mean to use `" + exe + "` instead of `terraform`?"
	}
	if exe == DefaultExecutableName && plainWord(word) {
		if d := distance(lower, exe); d > 0 && d < 3 {
			return "Did you mean to use `" + exe + "` instead of `" + word + "`?"
		}
	}
	return ""
}

// plainWord reports whether w is ASCII letters and digits only, so that it
// can be repeated in a reply without escaping.
func plainWord(w string) bool {
	for _, c := range w {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return w != ""
}

// distance is the Levenshtein distance between a and b, by runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
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

package command

import (
	"regexp"
	"strings"

	"github.com/atollhq/atoll"
)

// Format writes cmd as the comment a user would type to run it, with
// executable as its first word ("" is DefaultExecutableName): the other
// direction of Parse, so that commands built without a comment (the
// dashboard, the API) are shown, posted and audited as the same text, and
// read back by the same rules.
//
// Words the splitter would not read as themselves (spaces, quotes,
// backslashes, a leading dash...) are single-quoted; a flag value that
// starts with a dash is attached with "=", since a separate word starting
// with a dash is read as a forgotten value. Parse(Format(c)) gives back c
// for every command Parse can return, ProjectRegexp aside (it is Project,
// compiled when the parser is told to). Positional words that start with
// a dash cannot be written: Parse reads them as flags.
func Format(cmd atoll.Command, executable string) string {
	if executable == "" {
		executable = DefaultExecutableName
	}
	words := []string{executable, cmd.Name}
	if cmd.SubName != "" {
		words = append(words, quoteWord(cmd.SubName))
	}
	for _, a := range cmd.Args {
		words = append(words, quoteWord(a))
	}
	flag := func(name, value string) {
		if value == "" {
			return
		}
		if strings.HasPrefix(value, "-") {
			words = append(words, name+"="+quoteWord(value))
			return
		}
		words = append(words, name, quoteWord(value))
	}
	flag("-p", cmd.Project)
	flag("-d", cmd.Dir)
	flag("-w", cmd.Workspace)
	if cmd.AutoMergeDisabled {
		words = append(words, "--"+noMergeFlag.long)
	}
	flag("--"+mergeFlag.long, cmd.AutoMergeMethod)
	flag("--"+policySetFlag.long, cmd.PolicySet)
	if cmd.ClearPolicyApproval {
		words = append(words, "--"+clearFlag.long)
	}
	if cmd.Verbose {
		words = append(words, "--"+verboseFlag.long)
	}
	if len(cmd.ExtraArgs) > 0 {
		words = append(words, "--")
		for _, a := range cmd.ExtraArgs {
			words = append(words, quoteWord(a))
		}
	}
	return strings.Join(words, " ")
}

// bareWord is a word SplitWords reads as itself and Parse never takes for
// a flag: no quotes, spaces, backslashes or backticks, no leading dash.
var bareWord = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_./@:+=,-]*$`)

// quoteWord writes w so that SplitWords reads it back as w: as it is when
// it is a bare word, otherwise in single quotes (a quote inside closes
// them, adds an escaped quote and opens them again).
func quoteWord(w string) string {
	if bareWord.MatchString(w) {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

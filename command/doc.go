// Package command parses pull request comments into Atoll commands, with the
// grammar Atlantis users already know:
//
//	atlantis <command> [flags] [-- terraform-args...]
//
// Choices, and why:
//
//   - A comment is a command only when, after trimming surrounding
//     whitespace and backticks, it is a single line. Any comment that still
//     spans several lines is ignored, as Atlantis does: a longer discussion
//     that happens to start with "atlantis apply" must never run apply.
//   - The first word must be a prefix: the configured executable name
//     ("atlantis" by default), "run", "atoll", or "@<VCSUser>", matched
//     case-insensitively. "terraform" and near misses of "atlantis" get a
//     "Did you mean" reply, as in Atlantis. Command names are matched in
//     lower case; flags are case-sensitive.
//   - Words are split shell-style by SplitWords, but nothing is ever handed to
//     a shell: quotes only group and escape, and characters such as ";",
//     "$(...)", "|" and "#" are literal text.
//   - Commands outside Parser.AllowCommands (--allow-commands) are answered
//     as unknown, with the list of those available.
//   - Flags are read as pflag (Atlantis's parser) reads them: "-d x",
//     "-dx", "-d=x", "--dir x", "--dir=x", the last of a repeated flag
//     winning. Unknown or valueless flags, a long name behind one dash
//     ("-dir"), stray positional arguments and arguments to unlock and
//     cancel are errors whose message is a Markdown reply with the
//     relevant usage.
//   - The grammar owns both directions: Format writes an atoll.Command as
//     the comment a user would type, so that commands built by the
//     dashboard and the API are shown, posted and checked as that text.
package command

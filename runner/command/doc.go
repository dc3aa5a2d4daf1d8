// Package command parses pull request comments into Atoll commands, with the
// grammar Atlantis users already know:
//
//	atlantis <command> [flags] [-- terraform-args...]
//
// Choices, and why:
//
//   - A comment is a command only when, after trimming surrounding
//     whitespace, it is a single line. Any comment that still spans several
//     lines is ignored, as Atlantis does: a longer discussion that happens to
//     start with "atlantis apply" must never run apply. Trailing blank lines
//     (which GitHub adds when a comment is copied) are trimmed away first.
//   - The first word must be a prefix: the configured executable name
//     ("atlantis" by default), "atoll", or "@<VCSUser>". Prefixes match
//     case-insensitively (VCS user names are case-insensitive); command names
//     and flags are case-sensitive and lowercase.
//   - Words are split shell-style by SplitWords, but nothing is ever handed to
//     a shell: quotes only group and escape, and characters such as ";",
//     "$(...)", "|" and "#" are literal text.
//   - Flags are strict: unknown, repeated or valueless flags, stray positional
//     arguments and arguments to unlock, version and help are errors whose
//     message is a Markdown reply with the relevant usage.
package command

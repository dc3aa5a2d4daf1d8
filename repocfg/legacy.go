package repocfg

import "errors"

// checkLegacyShell refuses, in a version 2 file, run commands that
// Atlantis cannot split into words for its version 2 quoting rules (an
// unclosed quote, a trailing backslash): Atlantis rejects such a file.
func (d *decoder) checkLegacyShell() error {
	for _, r := range d.runCommands {
		if err := splittable(r.cmd); err != nil {
			return d.errorf(r.node, r.path, "version 2 cannot parse %q: %v (use version: 3)", r.cmd, err)
		}
	}
	return nil
}

// splittable follows the states of the shell-like word splitter Atlantis
// uses (github.com/google/shlex) far enough to find its two errors.
func splittable(s string) error {
	const (
		start = iota
		word
		escape       // after \ outside quotes
		single       // inside '...'
		double       // inside "..."
		doubleEscape // after \ inside "..."
		comment      // from # at the start of a word to the end of the line
	)
	state := start
	for _, c := range s {
		switch state {
		case start, word:
			switch {
			case c == ' ' || c == '\t' || c == '\r' || c == '\n':
				state = start
			case c == '\\':
				state = escape
			case c == '"':
				state = double
			case c == '\'':
				state = single
			case c == '#' && state == start:
				state = comment
			default:
				state = word
			}
		case escape:
			state = word
		case single:
			if c == '\'' {
				state = word
			}
		case double:
			switch c {
			case '"':
				state = word
			case '\\':
				state = doubleEscape
			}
		case doubleEscape:
			state = double
		case comment:
			if c == '\n' {
				state = start
			}
		}
	}
	switch state {
	case escape, doubleEscape:
		return errors.New("EOF found after escape character")
	case single, double:
		return errors.New("EOF found when expecting closing quote")
	}
	return nil
}

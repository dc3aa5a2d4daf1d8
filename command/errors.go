package command

import (
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
)

// maxEcho bounds how much of a user's input is repeated back in a reply.
const maxEcho = 80

// usageError is the error for a comment addressed to Atoll that it cannot
// run: the message is the whole Markdown reply, the problem then the usage of
// the command (or the general usage when name is not a command).
func (p Parser) usageError(name, format string, args ...any) *atoll.Error {
	msg := "Error: " + fmt.Sprintf(format, args...) + ".\n"
	if !Name(name).Known() {
		msg += "\n" // the general usage opens with a title, not "Usage of"
	}
	return &atoll.Error{Code: atoll.EINVALID, Message: fence(msg + p.usageText(name))}
}

// applyAllDisabled refuses an apply of every project (--disable-apply-all).
func (p Parser) applyAllDisabled() *atoll.Error {
	return &atoll.Error{Code: atoll.EINVALID, Message: fmt.Sprintf("**Error:** running `%s apply` without flags is disabled on this server "+
		"(--disable-apply-all). Name what to apply with -p, -d or -w.", p.executable())}
}

// helpReply answers "<command> --help": not a mistake, but like a mistake it
// is answered with a reply instead of being run.
func (p Parser) helpReply(name string) *atoll.Error {
	return &atoll.Error{Code: atoll.EINVALID, Message: p.CommandUsage(name)}
}

// quote renders user input for a reply. Go quoting escapes newlines and
// invisible characters, so the text cannot end the code block it is shown in
// or hide anything; long input is shortened.
func quote(s string) string {
	r := []rune(s)
	if len(r) > maxEcho {
		return fmt.Sprintf("%q…", string(r[:maxEcho]))
	}
	return fmt.Sprintf("%q", s)
}

// unknownCommand answers a command that does not exist or that
// --allow-commands does not allow, in Atlantis's words: both list what is
// available.
func (p Parser) unknownCommand(name string) *atoll.Error {
	msg := fmt.Sprintf("Error: unknown command %s.\nRun '%s --help' for usage.\nAvailable commands(--allow-commands): %s\n",
		quote(name), p.executable(), strings.Join(p.allowedList(), ", "))
	return &atoll.Error{Code: atoll.EINVALID, Message: fence(msg)}
}

package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/atollhq/atoll/command"
)

// commandsConfig is the part of Config that says which comment commands
// run, with Atlantis's flags of the same names.
type commandsConfig struct {
	AllowCommands   []string // --allow-commands, parsed; never nil
	DisableApply    bool
	DisableAutoplan bool
}

func commandsFlags(fs *flag.FlagSet, c *commandsConfig) {
	c.AllowCommands = slices.Clone(command.DefaultAllowCommands)
	fs.Func("allow-commands", "comma-separated comment commands users may run: "+strings.Join(command.AllCommands, ", ")+
		", or all (default "+strings.Join(command.DefaultAllowCommands, ",")+"; help is always allowed)", func(s string) error {
		names, err := parseAllowCommands(s)
		c.AllowCommands = names
		return err
	})
	fs.BoolVar(&c.DisableApply, "disable-apply", false, "refuse apply comments, whatever --allow-commands says")
	fs.BoolVar(&c.DisableAutoplan, "disable-autoplan", false, "do not plan when a pull request is opened or updated; plan comments still plan")
}

// parseAllowCommands parses --allow-commands as Atlantis does: names
// separated by commas, "all" for every command, unknown names an error.
func parseAllowCommands(s string) ([]string, error) {
	out := []string{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			continue
		case name == "all":
			return slices.Clone(command.AllCommands), nil
		case !slices.Contains(command.AllCommands, name):
			return nil, fmt.Errorf("unknown command %q: use %s or all", name, strings.Join(command.AllCommands, ", "))
		case !slices.Contains(out, name):
			out = append(out, name)
		}
	}
	return out, nil
}

// allowed is the list the comment parser allows: --allow-commands without
// apply when --disable-apply is set.
func (c *commandsConfig) allowed() []string {
	if !c.DisableApply {
		return slices.Clone(c.AllowCommands)
	}
	return slices.DeleteFunc(slices.Clone(c.AllowCommands), func(n string) bool { return n == command.Apply })
}

package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/atollhq/atoll/command"
)

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
func (c *Config) allowed() []string {
	if !c.DisableApply {
		return slices.Clone(c.AllowCommands)
	}
	return slices.DeleteFunc(slices.Clone(c.AllowCommands), func(n string) bool { return n == command.Apply })
}

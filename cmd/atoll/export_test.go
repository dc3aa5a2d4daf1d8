package main

import "flag"

// FlagNames lists every flag of `atoll server`, for the docs test: the
// table's, their aliases and the secrets' -file variants.
func FlagNames() []string {
	var c Config
	fs := c.flagSet("", c.options(), map[string]*string{})
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// Webhooks is the parsed --webhooks-config: each entry's kind.
func (c *Config) Webhooks() []string {
	var kinds []string
	for _, w := range c.webhooks {
		kinds = append(kinds, w.Kind)
	}
	return kinds
}

package main

import "flag"

// FlagNames lists every flag of `atoll server`, for the docs test.
func FlagNames() []string {
	var c Config
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	c.flags(fs)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

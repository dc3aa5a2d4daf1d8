package main

import (
	"flag"

	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner"
)

// fileListConfig holds --autoplan-file-list and
// --enable-diff-markdown-format, under their Atlantis names.
type fileListConfig struct {
	// AutoplanFileList is "" unless set: autodiscovery then keeps its
	// built-in rule (Terraform configuration and variable files).
	AutoplanFileList string
	// EnableDiffMarkdownFormat is on by default in Atoll, off in Atlantis.
	EnableDiffMarkdownFormat bool
}

func fileListFlags(fs *flag.FlagSet, c *fileListConfig) {
	fs.Func("autoplan-file-list", "comma-separated doublestar globs over repo-relative paths: a changed file matching one autoplans its directory when autodiscovered (default: *.tf, *.tf.json, *.tofu, *.tofu.json, *.tfvars, *.tfvars.json anywhere); when_modified of listed projects is unaffected", func(s string) error {
		if _, err := repocfg.ParseAutoplanFileList(s); err != nil {
			return err
		}
		c.AutoplanFileList = s
		return nil
	})
	fs.BoolVar(&c.EnableDiffMarkdownFormat, "enable-diff-markdown-format", true, "move Terraform's change markers (+, -, ~) to the start of plan output lines so GitHub colours them; =false shows the output as printed")
}

// configure sets the runner's side of the flags. The server-side config
// is copied, not changed: it may be shared.
func (c *fileListConfig) configure(r *runner.Runner) error {
	r.Markdown.RawPlanOutput = !c.EnableDiffMarkdownFormat
	list, err := repocfg.ParseAutoplanFileList(c.AutoplanFileList)
	if err != nil || list == nil {
		return err
	}
	sc := r.ServerConfig
	if sc == nil {
		sc = repocfg.DefaultServerConfig()
	}
	out := *sc
	out.AutoplanFileList = list
	r.ServerConfig = &out
	return nil
}

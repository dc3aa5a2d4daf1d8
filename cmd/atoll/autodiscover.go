package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/atollhq/atoll/repocfg"
)

// miscConfig holds Atlantis's --autodiscover-mode.
type miscConfig struct {
	AutodiscoverMode string // "" is auto
}

func miscFlags(fs *flag.FlagSet, c *miscConfig) {
	fs.Func("autodiscover-mode", "project autodiscovery when neither the server-side repo config nor atlantis.yaml sets autodiscover: "+
		strings.Join(repocfg.AutodiscoverModes, ", ")+" (default auto)", func(s string) error {
		if !slices.Contains(repocfg.AutodiscoverModes, s) {
			return fmt.Errorf("%q is not one of %s", s, strings.Join(repocfg.AutodiscoverModes, ", "))
		}
		c.AutodiscoverMode = s
		return nil
	})
}

// withAutodiscoverMode returns sc (nil: Atlantis's default config) with
// --autodiscover-mode as its default mode, without changing sc.
func (c *miscConfig) withAutodiscoverMode(sc *repocfg.ServerConfig) *repocfg.ServerConfig {
	if c.AutodiscoverMode == "" {
		return sc
	}
	if sc == nil {
		sc = repocfg.DefaultServerConfig()
	}
	out := *sc
	out.AutodiscoverMode = c.AutodiscoverMode
	return &out
}

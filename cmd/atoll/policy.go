package main

import (
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner"
)

// policyConfig is the part of Config for conftest policy checks, with
// Atlantis's flag name.
type policyConfig struct {
	EnablePolicyChecks bool
	ConftestBin        string
	QuietPolicyChecks  bool
}

func policyFlags(fs *flag.FlagSet, c *policyConfig) {
	fs.BoolVar(&c.EnablePolicyChecks, "enable-policy-checks", false,
		"after each plan, test it with conftest against the policy_sets of the server-side repo config's policies; failed sets block apply until owners approve_policies")
	fs.StringVar(&c.ConftestBin, "conftest-bin", "conftest", "the conftest binary policy checks run (a path, or a name looked up on PATH)")
	fs.BoolVar(&c.QuietPolicyChecks, "quiet-policy-checks", false, "leave a project's policy check section out of the plan comment when every set passed")
}

// policyChecks is the runner's policy checker, or nil when checks are off.
// Turning them on without policy sets, or without a conftest to run, is
// an error at start: checks that silently never run would let every apply
// through.
func (c *policyConfig) policyChecks(sc *repocfg.ServerConfig) (*runner.PolicyChecks, error) {
	if !c.EnablePolicyChecks {
		return nil, nil
	}
	if sc == nil || sc.Policies == nil {
		return nil, errors.New("--enable-policy-checks needs policies with policy_sets in the server-side repo config (--repo-config or --repo-config-json)")
	}
	bin, err := exec.LookPath(c.ConftestBin)
	if err == nil {
		bin, err = filepath.Abs(bin)
	}
	if err != nil {
		return nil, fmt.Errorf("--enable-policy-checks: conftest binary %q: %w", c.ConftestBin, err)
	}
	return &runner.PolicyChecks{Conftest: bin, Policies: sc.Policies}, nil
}

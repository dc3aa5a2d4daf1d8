package main

import (
	"errors"
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

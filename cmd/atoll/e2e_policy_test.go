package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// denyProduction fails plans creating a terraform_data whose input starts
// with "production".
const denyProduction = `package main

deny contains msg if {
	some rc in input.resource_changes
	rc.type == "terraform_data"
	startswith(rc.change.after.input, "production")
	msg := sprintf("%s: input %s is not allowed", [rc.address, rc.change.after.input])
}
`

// newPolicyE2E starts Atoll with --enable-policy-checks, conftest from
// ATOLL_TEST_CONFTEST and a server-side config whose policy sets live
// outside the repository (so a pull request cannot change them).
func newPolicyE2E(t *testing.T, repos ...map[string]any) *e2e {
	configure := policyConfig(t, map[string]any{"users": []string{"alice"}}, repos...)
	return newE2EConfigured(t, configure)
}

// policyConfig is the configuration of newPolicyE2E, whose set
// no-production is owned by setOwners.
func policyConfig(t *testing.T, setOwners map[string]any, repos ...map[string]any) func(*main.Config) {
	return policyConfigWith(t, setOwners, nil, repos...)
}

// policyConfigWith is policyConfig with more top-level keys of policies.
func policyConfigWith(t *testing.T, setOwners, policies map[string]any, repos ...map[string]any) func(*main.Config) {
	conftest := os.Getenv("ATOLL_TEST_CONFTEST")
	if conftest == "" {
		t.Skip("ATOLL_TEST_CONFTEST is not set: policy check tests need a conftest binary (make test installs one in bin/)")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"deny/policy.rego": denyProduction, "allow/policy.rego": "package main\n\ndeny contains msg if {\n\tfalse\n\tmsg := \"never\"\n}\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	all := map[string]any{
		"owners": map[string]any{"users": []string{"carol"}},
		"policy_sets": []map[string]any{
			{"name": "no-production", "path": filepath.Join(dir, "deny"), "source": "local",
				"owners": setOwners, "prevent_self_approve": true},
			{"name": "baseline", "path": filepath.Join(dir, "allow"), "source": "local"},
		},
	}
	maps.Copy(all, policies)
	cfg, err := json.Marshal(map[string]any{"repos": repos, "policies": all})
	if err != nil {
		t.Fatal(err)
	}
	return func(c *main.Config) {
		c.RepoConfigJSON = string(cfg)
		c.EnablePolicyChecks = true
		c.ConftestBin = conftest
	}
}

// A policy set owned by a GitHub team: a member approves (through a child
// team), someone outside it is refused.
func TestPolicyCheckTeamOwners(t *testing.T) {
	files := map[string]string{"production/main.tf": tfProject("production", 1)}
	e, x := newE2EExtras(t, files, policyConfig(t, map[string]any{"teams": []string{"security"}}))
	x.setTeam("security", "")
	x.setTeam("appsec", "security", "dave")
	x.setTeam("devs", "", "erin")
	e.open(1, "policies", map[string]string{"production/main.tf": tfProject("production", 2)}, "production/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Policy Check Failed")
	e.commentAs("erin", 1, "atlantis approve_policies")
	mustContain(t, "erin", e.waitComment(1, 2), "user erin is not a policy owner", "have: 0.")
	e.commentAs("dave", 1, "atlantis approve_policies")
	mustContain(t, "dave", e.waitComment(1, 3), "have: 1. Approved by: dave.")
	e.comment(1, "atlantis apply")
	mustContain(t, "apply", e.waitComment(1, 4), "Apply complete!")
}

// A repos entry with policy_check: false turns the checks off for its
// repositories: no policy section, and apply needs no approval.
func TestPolicyCheckOffForRepository(t *testing.T) {
	e := newPolicyE2E(t, map[string]any{"id": "/.*/"}, map[string]any{"id": "github.com/acme/infra", "policy_check": false})
	sha := e.open(1, "unchecked", map[string]string{"production/main.tf": tfProject("production", 2)}, "production/main.tf")
	plan := e.waitComment(1, 1)
	mustContain(t, "autoplan", plan, "Plan: 2 to add")
	if strings.Contains(plan, "Policy") {
		t.Fatalf("a repository with policy_check: false was checked:\n%s", plan)
	}
	e.commentAs("carol", 1, "atlantis approve_policies")
	mustContain(t, "approve_policies", e.waitComment(1, 2), "Ran Approve Policies for 0 projects")
	e.comment(1, "atlantis apply -d production")
	mustContain(t, "apply", e.waitComment(1, 3), "Apply complete!")
	if s := e.gh.latestStatus(sha, "atlantis/policy_check"); s.State != "" {
		t.Fatalf("policy_check status set: %+v", s)
	}
}

// A project's policy_check in atlantis.yaml counts where the server's
// allowed_overrides lists policy_check: that project is not checked and
// applies without approval; the others still are. Without the override,
// the file is refused with the key named.
func TestPolicyCheckOffForProject(t *testing.T) {
	const cfg = "version: 3\nprojects:\n- dir: production\n  policy_check: false\n- dir: staging\n"
	e := newPolicyE2E(t, map[string]any{"id": "/.*/", "allowed_overrides": []string{"policy_check"}})
	e.open(1, "project-off", map[string]string{"atlantis.yaml": cfg, "production/main.tf": tfProject("production", 2),
		"staging/main.tf": tfProject("production-in-staging", 1)}, "atlantis.yaml", "production/main.tf", "staging/main.tf")
	plan := e.waitComment(1, 1)
	mustContain(t, "autoplan", plan, "Plan: 2 to add", "Policy Check Failed", "input production-in-staging-0 is not allowed")
	if strings.Contains(plan, "input production-0 is not allowed") {
		t.Fatalf("the project with policy_check: false was checked:\n%s", plan)
	}
	e.comment(1, "atlantis apply -d production")
	mustContain(t, "apply", e.waitComment(1, 2), "Apply complete!")
	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "refused apply", e.waitComment(1, 3), "All policies must pass")

	refused := newPolicyE2E(t, map[string]any{"id": "/.*/"})
	refused.open(1, "project-off", map[string]string{"atlantis.yaml": cfg, "production/main.tf": tfProject("production", 2)}, "atlantis.yaml", "production/main.tf")
	mustContain(t, "refused config", refused.waitComment(1, 1), "policy_check", "allowed_overrides: [policy_check]")
}

func TestPolicyCheckBlocksApplyUntilOwnerApproves(t *testing.T) {
	e := newPolicyE2E(t)
	sha := e.open(1, "policies", map[string]string{
		"staging/main.tf":    tfProject("staging", 2),
		"production/main.tf": tfProject("production", 2),
	}, "staging/main.tf", "production/main.tf")
	plan := e.waitComment(1, 1)
	mustContain(t, "autoplan", plan, "Policy Check Failed", "no-production", "terraform_data.app[0]: input production-0 is not allowed",
		"policy set: no-production: requires: 1 approval(s), have: 0.", "atlantis approve_policies -d production",
		"Policy Check Passed")
	e.waitStatus(sha, "atlantis/policy_check", "failure", "1/2 projects")
	e.waitStatus(sha, "atlantis/policy_check: production/default", "failure", "policy owner must approve")
	e.waitStatus(sha, "atlantis/policy_check: staging/default", "success", "passed")

	// A set that failed and is not approved blocks the apply.
	e.comment(1, "atlantis apply -d production")
	mustContain(t, "refused apply", e.waitComment(1, 2), "All policies must pass", "`no-production` (0 of 1 approval(s))", "atlantis approve_policies -d production")

	// Only owners approve; the author cannot, with prevent_self_approve.
	e.commentAs("bob", 1, "atlantis approve_policies")
	mustContain(t, "non-owner", e.waitComment(1, 3), "user bob is not a policy owner", "have: 0.")
	e.commentAs("alice", 1, "atlantis approve_policies")
	mustContain(t, "self-approval", e.waitComment(1, 4), "alice is the author of this pull request and the set has prevent", "have: 0.")

	e.commentAs("carol", 1, "atlantis approve_policies -d production")
	mustContain(t, "owner approval", e.waitComment(1, 5), "Ran Approve Policies", "have: 1. Approved by: carol.", "can be applied")
	e.waitStatus(sha, "atlantis/policy_check", "success", "2/2 projects")

	// --clear-policy-approval takes the approval back: apply is refused again.
	e.commentAs("carol", 1, "atlantis approve_policies --clear-policy-approval --policy-set no-production")
	mustContain(t, "clear", e.waitComment(1, 6), "--clear-policy-approval", "have: 0.")
	e.waitStatus(sha, "atlantis/policy_check", "failure", "1/2 projects")
	e.comment(1, "atlantis apply -d production")
	mustContain(t, "refused apply after clear", e.waitComment(1, 7), "All policies must pass")
	e.commentAs("carol", 1, "atlantis approve_policies -d production --policy-set no-production")
	mustContain(t, "approval again", e.waitComment(1, 8), "have: 1. Approved by: carol.")

	e.comment(1, "atlantis apply -d production")
	mustContain(t, "approved apply", e.waitComment(1, 9), "Apply complete!")
	// A project whose sets all passed applies directly.
	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "passing apply", e.waitComment(1, 10), "Apply complete!")

	events, err := e.m.DB.Events(context.Background(), 200)
	if err != nil {
		t.Fatal(err)
	}
	var approvals []string
	for _, ev := range events {
		if strings.HasPrefix(ev.Action, "policy.") {
			approvals = append(approvals, fmt.Sprintf("%s %s %s", ev.Actor, ev.Action, ev.Detail))
		}
	}
	// Newest first: approve, clear, approve.
	if len(approvals) != 3 || !strings.Contains(approvals[0], "carol policy.approve production/default: policy set no-production") ||
		!strings.Contains(approvals[1], "carol policy.clear production/default: policy set no-production") {
		t.Fatalf("policy audit events = %q", approvals)
	}
}

// --enable-policy-checks without policy sets, or without a conftest to
// run, stops the server at start: checks that never run would let every
// apply through.
func TestEnablePolicyChecksNeedsPoliciesAndConftest(t *testing.T) {
	var c main.Config
	if err := c.Parse([]string{"--enable-policy-checks", "--demo"}, envOf(map[string]string{"ATOLL_CONFTEST_BIN": "/opt/conftest"})); err != nil {
		t.Fatal(err)
	}
	if !c.EnablePolicyChecks || c.ConftestBin != "/opt/conftest" {
		t.Fatalf("parsed %+v", c.EnablePolicyChecks)
	}
	testEnv(t)
	for _, tc := range []struct{ repoConfig, conftest, want string }{
		{"", "conftest", "--enable-policy-checks needs policies with policy_sets"},
		{`{"policies": {"policy_sets": [{"name": "a", "path": "/p"}]}}`, filepath.Join(t.TempDir(), "no-conftest"), "conftest binary"},
	} {
		m := main.NewMain()
		m.Config.Demo, m.Config.Port, m.Config.DataDir = true, 0, t.TempDir()
		m.Config.TerraformBin, m.Config.LogLevel = terraformBin(t), "warn"
		m.Config.EnablePolicyChecks, m.Config.RepoConfigJSON, m.Config.ConftestBin = true, tc.repoConfig, tc.conftest
		err := m.Run(context.Background())
		m.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run with %q and %q = %v; want an error with %q", tc.repoConfig, tc.conftest, err, tc.want)
		}
	}
}

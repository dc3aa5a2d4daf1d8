package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner/executor"
)

// PolicyChecks runs Atlantis's policy checks (--enable-policy-checks):
// after every successful plan, conftest tests the plan's JSON against each
// policy set of the server-side config; a failed set blocks the apply until
// enough of its owners comment approve_policies.
type PolicyChecks struct {
	Conftest string // the conftest binary
	Policies *repocfg.Policies
}

// showFileName is the plan's JSON that conftest reads, in the project dir.
func showFileName(j *atoll.Job) string {
	return strings.TrimSuffix(planFileName(j), ".tfplan") + ".json"
}

// remotePolicies runs the policy sets of a plan a worker made against its
// JSON (show) here, in a directory of its own: a worker holds neither the
// sets nor conftest. Steps of a custom policy check see the plan's JSON,
// not the checkout.
func (r *Runner) remotePolicies(ctx context.Context, w *work, j *atoll.Job, spec executor.Spec, sink *logSink, show []byte) ([]atoll.PolicyCheck, error) {
	dir, err := os.MkdirTemp(r.Workdirs.Root, "policy-")
	if err != nil {
		return nil, fmt.Errorf("policy check dir: %w", err)
	}
	defer os.RemoveAll(dir)
	x := r.local().execution(spec, j, sink)
	x.log = w.log
	return x.checkPolicies(ctx, dir, show)
}

// checkPolicies runs every policy set against the plan's JSON (show) in the
// project's dir and returns one result per set; the output goes to the
// plan job's log. A conftest that cannot run fails its set (with the
// reason as output): owners can still approve it, as in Atlantis.
func (x *execution) checkPolicies(ctx context.Context, dir string, show []byte) ([]atoll.PolicyCheck, error) {
	if x.e.Policies == nil || x.e.Policies.Policies == nil {
		return nil, nil
	}
	j := x.j
	input := showFileName(j)
	if err := os.WriteFile(filepath.Join(dir, input), show, 0o600); err != nil {
		return nil, fmt.Errorf("write plan json for conftest: %w", err)
	}
	defer os.Remove(filepath.Join(dir, input))
	var checks []atoll.PolicyCheck
	var err error
	if j.Spec.PolicySteps == nil {
		checks, err = x.conftestSets(ctx, dir, input)
	} else {
		checks, err = x.policySteps(ctx, dir)
	}
	markSticky(x.e.Policies, checks)
	return checks, err
}

// markSticky marks the checks of sets with sticky_policy_approvals and
// hashes their output's items (the matches of policy_item_regex), which
// decide which earlier approvals still cover them.
func markSticky(pc *PolicyChecks, checks []atoll.PolicyCheck) {
	for i := range checks {
		c := &checks[i]
		sticky, re := pc.Policies.StickyFor(c.PolicySet)
		if !sticky {
			continue
		}
		c.Sticky, c.ItemHashes = true, policyItemHashes(re, c.Output)
	}
}

// policyItemHashes are the SHA-256 hex digests of re's matches in out,
// each once, sorted.
func policyItemHashes(re *regexp.Regexp, out string) []string {
	var hashes []string
	for _, item := range re.FindAllString(out, -1) {
		sum := sha256.Sum256([]byte(item))
		hashes = append(hashes, hex.EncodeToString(sum[:]))
	}
	slices.Sort(hashes)
	return slices.Compact(hashes)
}

// policySteps runs a policy_check stage with steps of its own: run, env
// and multienv steps in order, as in the plan stage, and conftest at its
// policy_check step (after the others when it has none, so that a
// workflow cannot skip the checks). The steps' output before and after
// conftest's joins every set's output, as Atlantis shows it around the
// results. A failing step fails the plan, as a policy check that errors
// does in Atlantis. With custom_policy_check (the project's, else the
// server config's) and run steps, the run steps are the check instead.
func (x *execution) policySteps(ctx context.Context, dir string) ([]atoll.PolicyCheck, error) {
	j := x.j
	s := x.newSteps(dir, filepath.Join(dir, planFileName(j)))
	// The project's custom_policy_check, else the server config's.
	custom := x.custom && slices.ContainsFunc(j.Spec.PolicySteps, func(st atoll.Step) bool { return st.Name == "run" })
	if custom {
		return x.customPolicies(ctx, s, j.Spec.PolicySteps)
	}
	var checks []atoll.PolicyCheck
	var before, after []string
	ran := false
	for _, st := range j.Spec.PolicySteps {
		if st.Name == "policy_check" {
			if ran {
				continue
			}
			var err error
			if checks, err = x.conftestSets(ctx, dir, showFileName(j)); err != nil {
				return nil, err
			}
			ran = true
			continue
		}
		n := len(s.outputs)
		if err := s.run(ctx, []atoll.Step{st}); err != nil {
			return nil, err
		}
		if ran {
			after = append(after, s.outputs[n:]...)
		} else {
			before = append(before, s.outputs[n:]...)
		}
	}
	if !ran {
		var err error
		if checks, err = x.conftestSets(ctx, dir, showFileName(j)); err != nil {
			return nil, err
		}
	}
	for i := range checks {
		checks[i].Output = strings.Join(slices.Concat(before, []string{checks[i].Output}, after), "\n")
	}
	return checks, nil
}

// customPolicies runs a custom policy check (custom_policy_check): no
// conftest; as in Atlantis, the output of the stage's nth run step is the
// result of the nth policy set, failed when it is empty, starts with FAIL
// or counts failures ("1 failure", JSON "failures": [...]). Outputs beyond
// the sets join the last set's. A failing step fails the plan.
func (x *execution) customPolicies(ctx context.Context, s *steps, list []atoll.Step) ([]atoll.PolicyCheck, error) {
	sets := x.e.Policies.Policies.Sets
	checks := make([]atoll.PolicyCheck, 0, len(sets))
	for _, st := range list {
		if st.Name == "policy_check" {
			continue // the run steps are the check
		}
		n := len(s.outputs)
		if err := s.run(ctx, []atoll.Step{st}); err != nil {
			return nil, err
		}
		if st.Name != "run" || len(sets) == 0 {
			continue
		}
		out := strings.Join(s.outputs[n:], "\n")
		if i := len(checks); i < len(sets) {
			checks = append(checks, atoll.PolicyCheck{PolicySet: sets[i].Name, ApproveCount: sets[i].ApproveCount, Output: out})
		} else {
			checks[i-1].Output = strings.TrimSpace(checks[i-1].Output + "\n" + out)
		}
	}
	// A set no run step answered fails rather than passing unchecked.
	for _, set := range sets[len(checks):] {
		checks = append(checks, atoll.PolicyCheck{PolicySet: set.Name, ApproveCount: set.ApproveCount})
	}
	for i := range checks {
		c := &checks[i]
		c.Passed = customPassed(c.Output)
		if strings.TrimSpace(c.Output) == "" {
			c.Output = "No output for this policy set: a custom policy check whose run step prints nothing (or that has fewer run steps than policy sets) fails."
		}
		verdict := "passed"
		if !c.Passed {
			verdict = "failed"
		}
		s.sink.Write(atoll.StreamAtoll, fmt.Sprintf("Policy set %s %s (custom policy check).", c.PolicySet, verdict))
	}
	return checks, nil
}

// customFailures is how Atlantis finds failures in a custom check's output.
var customFailures = regexp.MustCompile(`([1-9][0-9]* failure|failures": \[)`)

func customPassed(out string) bool {
	t := strings.TrimSpace(out)
	return t != "" && !strings.HasPrefix(t, "FAIL") && !customFailures.MatchString(t)
}

// conftestSets runs conftest for every policy set against input (the
// plan's JSON, relative to dir) and returns one result per set.
func (x *execution) conftestSets(ctx context.Context, dir, input string) ([]atoll.PolicyCheck, error) {
	pc, j, sink := x.e.Policies, x.j, x.sink
	checks := make([]atoll.PolicyCheck, 0, len(pc.Policies.Sets))
	for _, set := range pc.Policies.Sets {
		args := append([]string{"test", "--no-color", "--policy", set.Path, input}, j.Spec.PolicyArgs...)
		sink.Write(atoll.StreamAtoll, fmt.Sprintf("$ conftest %s   # policy set %s", strings.Join(args, " "), set.Name))
		out, err := runConftest(ctx, pc.Conftest, dir, args)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			sink.Write(atoll.StreamStdout, line)
		}
		passed := err == nil
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			out = strings.TrimSpace(out + "\nconftest did not run: " + err.Error())
		}
		verdict := "passed"
		if !passed {
			verdict = "failed"
		}
		sink.Write(atoll.StreamAtoll, fmt.Sprintf("Policy set %s %s.", set.Name, verdict))
		checks = append(checks, atoll.PolicyCheck{PolicySet: set.Name, Passed: passed, Output: out, ApproveCount: set.ApproveCount})
	}
	return checks, nil
}

// runConftest runs conftest in dir with a bare environment: it reads only
// the plan's JSON and the policies, and needs none of the server's
// credentials.
func runConftest(ctx context.Context, bin, dir string, args []string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir()}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// policiesOn reports whether job j's plan is policy checked:
// --enable-policy-checks, unless the project's policy_check (where
// allowed_overrides lets it set one) or else the server-side repo config
// says policy_check: false for its repository.
func (r *Runner) policiesOn(w *work, j *atoll.Job) bool {
	if r.Policies == nil || r.Policies.Policies == nil {
		return false
	}
	if j.Spec.PolicyCheck != nil {
		return *j.Spec.PolicyCheck
	}
	return r.ServerConfig == nil || r.ServerConfig.PolicyCheckFor(serverRepoID(w.repo))
}

// policiesBlock returns an EFORBIDDEN error naming the failed, unapproved
// policy sets of apply job j's plan (checks as read now), or nil. With
// policy checks on for the repository, a plan that was never checked (made
// before they were turned on) must be planned again.
func (r *Runner) policiesBlock(w *work, j *atoll.Job, checks []atoll.PolicyCheck) error {
	if !r.policiesOn(w, j) {
		return nil
	}
	label := projectLabel(j.Dir, j.Workspace, j.Project)
	if len(checks) == 0 {
		return atoll.Errorf(atoll.EFORBIDDEN, "Policy checks are on, but the plan of project %s was not checked. Nothing was applied. Run `%s` to plan and check it again.",
			label, r.Markdown.CommandFor("plan", j.Dir, j.Workspace, j.Project))
	}
	var failing []string
	for _, c := range checks {
		if !c.Satisfied() {
			failing = append(failing, fmt.Sprintf("`%s` (%d of %d approval(s))", c.PolicySet, len(c.Approvals), max(c.ApproveCount, 1)))
		}
	}
	if len(failing) == 0 {
		return nil
	}
	return atoll.Errorf(atoll.EFORBIDDEN, "All policies must pass for project %s before it is applied: policy set(s) %s failed. Nothing was applied. A policy owner can approve with `%s`, or fix the code and plan again.",
		label, strings.Join(failing, ", "), r.Markdown.CommandFor("approve_policies", j.Dir, j.Workspace, j.Project))
}

// policiesBeforeApply checks apply job j's plan's policy results as read
// now.
func (r *Runner) policiesBeforeApply(ctx context.Context, w *work, j *atoll.Job) error {
	if !r.policiesOn(w, j) {
		return nil
	}
	checks, err := r.DB.PolicyChecks(ctx, j.Spec.PlanID)
	if err != nil {
		return err
	}
	return r.policiesBlock(w, j, checks)
}

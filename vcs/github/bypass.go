package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/google/go-github/v88/github"
)

// With Config.AllowMergeableBypassApply, a pull request GitHub calls
// "blocked" is mergeable when reviews are settled and every required
// check other than Atoll's own apply checks has passed: branch protection
// that requires "atlantis/apply" would otherwise block the apply that sets
// it. Anything this cannot judge (an unknown ruleset rule, a failed call)
// leaves the pull request not mergeable.

// bypassSafeRules are ruleset rule types that never block a merge of an
// up-to-date pull request, or that are judged below.
var bypassSafeRules = map[string]bool{
	"creation": true, "deletion": true, "non_fast_forward": true,
	"required_status_checks": true, "pull_request": true,
}

// mergeableOrBypass is mergeable(pr), with the bypass where it applies.
// A failure to judge is logged and counts as not mergeable: the apply
// requirement then refuses, as it would without the flag.
func (p *Provider) mergeableOrBypass(ctx context.Context, gh *github.Client, repo atoll.Repo, pr *github.PullRequest) bool {
	if mergeable(pr) || !p.cfg.AllowMergeableBypassApply || !pr.GetMergeable() ||
		pr.GetDraft() || pr.GetMergeableState() != "blocked" {
		return mergeable(pr)
	}
	ok, why, err := p.bypassApply(ctx, gh, repo, pr)
	log := p.cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	switch {
	case err != nil:
		log.Error("github: cannot tell whether only apply checks block the pull request; counting it not mergeable",
			"repo", repo.FullName(), "pull", pr.GetNumber(), "err", err)
	case !ok:
		log.Info("github: pull request blocked by more than apply checks", "repo", repo.FullName(), "pull", pr.GetNumber(), "reason", why)
	}
	return ok && err == nil
}

// bypassApply reports whether only Atoll's apply checks block pr, and
// otherwise what does.
func (p *Provider) bypassApply(ctx context.Context, gh *github.Client, repo atoll.Repo, pr *github.PullRequest) (bool, string, error) {
	base, sha := pr.GetBase().GetRef(), pr.GetHead().GetSHA()
	decision, err := p.reviewDecision(ctx, gh, repo, pr.GetNumber())
	if err != nil {
		return false, "", err
	}
	// reviewDecision covers classic protection and CODEOWNERS; empty means
	// no review is required there.
	if decision != "" && decision != "APPROVED" {
		return false, "review decision " + decision, nil
	}
	required := map[string]bool{}
	checks, _, err := gh.Repositories.GetRequiredStatusChecks(ctx, repo.Owner, repo.Name, base)
	switch {
	case noRequiredChecks(err):
		// No classic protection, or no required checks in it.
	case err != nil:
		return false, "", apiError(err, "get required status checks of %s branch %s (the token needs read access to branch protection)", repo.FullName(), base)
	default:
		if checks.Contexts != nil {
			for _, c := range *checks.Contexts {
				required[c] = true
			}
		}
		if checks.Checks != nil {
			for _, c := range *checks.Checks {
				required[c.Context] = true
			}
		}
	}
	rules, err := p.branchRules(ctx, gh, repo, base)
	if err != nil {
		return false, "", err
	}
	for _, r := range rules {
		if !bypassSafeRules[r.Type] {
			return false, "ruleset rule " + r.Type, nil
		}
		switch r.Type {
		case "required_status_checks":
			var params struct {
				Checks []struct {
					Context string `json:"context"`
				} `json:"required_status_checks"`
			}
			if err := json.Unmarshal(r.Parameters, &params); err != nil {
				return false, "", fmt.Errorf("github: ruleset required_status_checks of %s: %w", repo.FullName(), err)
			}
			for _, c := range params.Checks {
				required[c.Context] = true
			}
		case "pull_request":
			var params struct {
				Approvals int `json:"required_approving_review_count"`
			}
			if err := json.Unmarshal(r.Parameters, &params); err != nil {
				return false, "", fmt.Errorf("github: ruleset pull_request of %s: %w", repo.FullName(), err)
			}
			// Conservative: a ruleset's approvals count only when GitHub's
			// own decision says approved.
			if params.Approvals > 0 && decision != "APPROVED" {
				return false, "ruleset requires approvals", nil
			}
		}
	}
	passed, err := p.passedChecks(ctx, gh, repo, sha)
	if err != nil {
		return false, "", err
	}
	apply := p.statusName() + "/apply"
	for name := range required {
		if name == apply || strings.HasPrefix(name, apply+": ") || p.otherInstance(name) {
			continue
		}
		if !passed[name] {
			return false, "required check " + name + " has not passed", nil
		}
	}
	return true, "", nil
}

// noRequiredChecks tells GitHub's two 404s that mean "nothing required"
// from a bare "Not Found", which may hide a token that may not look.
func noRequiredChecks(err error) bool {
	if errors.Is(err, github.ErrBranchNotProtected) {
		return true
	}
	var er *github.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound &&
		strings.Contains(er.Message, "not enabled")
}

// otherInstance reports whether a check context belongs to another
// instance named in IgnoreStatusNames. As in Atlantis, the owner is the
// part before the first "/", so "other/plan", "other/apply: dir" and a bare
// "other" all belong to "other".
func (p *Provider) otherInstance(context string) bool {
	owner, _, _ := strings.Cut(context, "/")
	return slices.Contains(p.cfg.IgnoreStatusNames, owner)
}

func (p *Provider) statusName() string {
	if p.cfg.StatusName == "" {
		return "atlantis"
	}
	return p.cfg.StatusName
}

const reviewDecisionQuery = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { reviewDecision } }
}`

// reviewDecision is GitHub's APPROVED, CHANGES_REQUESTED or
// REVIEW_REQUIRED, or "" when no review is required.
func (p *Provider) reviewDecision(ctx context.Context, gh *github.Client, repo atoll.Repo, number int) (string, error) {
	var data struct {
		Repository struct {
			PullRequest struct {
				ReviewDecision *string `json:"reviewDecision"`
			} `json:"pullRequest"`
		} `json:"repository"`
	}
	gqlErrs, err := p.graphqlQuery(ctx, gh, reviewDecisionQuery,
		map[string]any{"owner": repo.Owner, "name": repo.Name, "number": number}, &data)
	if err == nil && len(gqlErrs) > 0 {
		err = graphqlErrors(gqlErrs)
	}
	if err != nil {
		return "", fmt.Errorf("github: review decision of %s#%d: %w", repo.FullName(), number, err)
	}
	if d := data.Repository.PullRequest.ReviewDecision; d != nil {
		return *d, nil
	}
	return "", nil
}

type branchRule struct {
	Type       string          `json:"type"`
	Parameters json.RawMessage `json:"parameters"`
}

// branchRules lists the active ruleset rules of branch
// (GET /repos/{owner}/{repo}/rules/branches/{branch}).
func (p *Provider) branchRules(ctx context.Context, gh *github.Client, repo atoll.Repo, branch string) ([]branchRule, error) {
	var all []branchRule
	for page := 1; ; {
		u := fmt.Sprintf("repos/%s/%s/rules/branches/%s?per_page=%d&page=%d",
			url.PathEscape(repo.Owner), url.PathEscape(repo.Name), url.PathEscape(branch), perPage, page)
		req, err := gh.NewRequest(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		var rules []branchRule
		resp, err := gh.Do(req, &rules)
		if err != nil {
			return nil, apiError(err, "get rules of %s branch %s", repo.FullName(), branch)
		}
		all = append(all, rules...)
		if resp.NextPage == 0 {
			return all, nil
		}
		page = resp.NextPage
	}
}

// passedChecks names the statuses and check runs of sha that passed:
// state success, or a latest check run concluded success, neutral or
// skipped (GitHub accepts those for required checks).
func (p *Provider) passedChecks(ctx context.Context, gh *github.Client, repo atoll.Repo, sha string) (map[string]bool, error) {
	passed := map[string]bool{}
	opts := &github.ListOptions{PerPage: perPage}
	for {
		st, resp, err := gh.Repositories.GetCombinedStatus(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			return nil, apiError(err, "get combined status of %s@%s", repo.FullName(), sha)
		}
		for _, s := range st.Statuses {
			passed[s.GetContext()] = s.GetState() == "success"
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	copts := &github.ListCheckRunsOptions{Filter: github.Ptr("latest"), ListOptions: github.ListOptions{PerPage: perPage}}
	seen := map[string]bool{}
	for {
		res, resp, err := gh.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, copts)
		if err != nil {
			return nil, apiError(err, "list check runs of %s@%s", repo.FullName(), sha)
		}
		for _, cr := range res.CheckRuns {
			// Newest first: the first run of a name is its verdict.
			if name := cr.GetName(); !seen[name] {
				seen[name] = true
				switch cr.GetConclusion() {
				case "success", "neutral", "skipped":
					passed[name] = cr.GetStatus() == "completed"
				default:
					passed[name] = false
				}
			}
		}
		if resp.NextPage == 0 {
			break
		}
		copts.Page = resp.NextPage
	}
	return passed, nil
}

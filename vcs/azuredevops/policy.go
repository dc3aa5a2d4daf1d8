package azuredevops

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/policy"
)

// defaultStatusName is the prefix of Atoll's status contexts when
// Config.StatusName is empty (runner.DefaultStatusName, as Atlantis).
const defaultStatusName = "atlantis"

// policiesPage is how many policy evaluations one call asks for.
const policiesPage = 100

// blockingPolicy names the first branch policy that keeps pr from
// completing, "" when none does. mergeStatus "succeeded" only says git can
// merge the pull request; required reviewers, builds and statuses are
// branch policies, whose evaluations the Policy Evaluations API lists for
// the artifact vstfs:///CodeReview/CodeReviewId/{project id}/{pull request
// id}. That artifact takes the project's id: with its name the service
// finds no evaluations and nothing would seem to block.
//
// The Policy API lives at the organization URL as Git does (on Services
// and Server), so gc's client, with the Authorization value it was built
// with, serves it too.
func (p *Provider) blockingPolicy(ctx context.Context, gc *git.ClientImpl, project string, pr *git.GitPullRequest) (string, error) {
	if pr.Repository == nil || pr.Repository.Project == nil || pr.Repository.Project.Id == nil || pr.PullRequestId == nil {
		return "", fmt.Errorf("the pull request does not name its project's id")
	}
	artifact := "vstfs:///CodeReview/CodeReviewId/" + pr.Repository.Project.Id.String() + "/" + strconv.Itoa(*pr.PullRequestId)
	pc := &policy.ClientImpl{Client: gc.Client}
	for skip := 0; ; skip += policiesPage {
		evals, err := pc.GetPolicyEvaluations(ctx, policy.GetPolicyEvaluationsArgs{Project: &project, ArtifactId: &artifact,
			Top: ptr(policiesPage), Skip: ptr(skip)})
		if err != nil {
			return "", err
		}
		for _, e := range deref(evals) {
			if name := p.blocks(e); name != "" {
				return name, nil
			}
		}
		if len(deref(evals)) < policiesPage {
			return "", nil
		}
	}
}

// blocks names the policy of evaluation e when it keeps the pull request
// from completing, "" when it does not. As in Atlantis: a disabled or
// deleted policy, an optional (non-blocking) one, and the status policy on
// Atoll's own apply status (which the apply being decided sets, so it
// would block itself) do not count; any other policy blocks until it is
// approved. A policy that does not apply to the pull request
// (notApplicable, which the service leaves out of the list unless asked)
// does not keep Azure DevOps from completing it either.
func (p *Provider) blocks(e policy.PolicyEvaluationRecord) string {
	c := e.Configuration
	if c == nil || !deref(c.IsEnabled) || deref(c.IsDeleted) || !deref(c.IsBlocking) {
		return ""
	}
	status := deref(e.Status)
	if status == policy.PolicyEvaluationStatusValues.Approved || status == policy.PolicyEvaluationStatusValues.NotApplicable {
		return ""
	}
	settings, _ := c.Settings.(map[string]any)
	genre, _ := settings["statusGenre"].(string)
	name, _ := settings["statusName"].(string)
	if p.ownApplyStatus(genre, name) {
		return ""
	}
	what := "policy " + strconv.Itoa(deref(c.Id))
	if c.Type != nil && deref(c.Type.DisplayName) != "" {
		what = fmt.Sprintf("%s policy %d", deref(c.Type.DisplayName), deref(c.Id))
	}
	if name != "" {
		what += " (status " + strings.TrimPrefix(genre+"/", "/") + name + ")"
	}
	return what + " is " + string(status)
}

// ownApplyStatus reports whether a status policy's genre and name are
// those of an apply status Atoll posts: NAME/apply or, per project,
// NAME/apply: PROJECT (NAME is the status name, "atlantis" by default).
func (p *Provider) ownApplyStatus(genre, name string) bool {
	if name == "" {
		return false
	}
	rest, ok := strings.CutPrefix(genre, statusGenreRoot+"/")
	if !ok {
		return false
	}
	apply := p.statusName() + "/apply"
	context := rest + "/" + name
	return context == apply || strings.HasPrefix(context, apply+": ")
}

func (p *Provider) statusName() string {
	if p.cfg.StatusName == "" {
		return defaultStatusName
	}
	return p.cfg.StatusName
}

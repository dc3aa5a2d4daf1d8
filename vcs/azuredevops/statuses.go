package azuredevops

import (
	"context"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
)

// statusGenreRoot begins the genre of every status Atoll posts. It is
// Atlantis's, so that a branch policy written for Atlantis keeps matching
// Atoll's statuses unchanged.
const statusGenreRoot = "Atlantis Bot"

// statusContext is the genre and name a status context ("atlantis/apply",
// "atlantis/plan: dir/default") is posted under. A branch policy's "status
// to check" is one string that Azure DevOps splits at its last "/" into
// genre and name, so the context is split the same way, after
// statusGenreRoot: "atlantis/apply" becomes genre "Atlantis Bot/atlantis",
// name "apply", which the policy string "Atlantis Bot/atlantis/apply"
// matches. A name of its own cannot hold a "/" and still be matched by a
// policy. This is the split Atlantis makes, so the same context gets the
// same genre and name from both.
func statusContext(context string) (genre, name string) {
	i := strings.LastIndex(context, "/")
	if i < 0 {
		return statusGenreRoot, context
	}
	return statusGenreRoot + "/" + context[:i], context[i+1:]
}

// maxDescription bounds a status description: Azure shows one line, and
// its limit is undocumented, so stay well short of anything plausible.
const maxDescription = 256

var statusStates = map[string]git.GitStatusState{
	vcs.StatusPending: git.GitStatusStateValues.Pending,
	vcs.StatusSuccess: git.GitStatusStateValues.Succeeded,
	vcs.StatusFailure: git.GitStatusStateValues.Failed,
	vcs.StatusError:   git.GitStatusStateValues.Error,
}

// SetStatus posts st for sha as a pull request status on every active pull
// request whose source head is sha, tied to the iteration that pushed sha.
// Pull request statuses, not commit statuses, are what a branch policy
// ("Require a successful status", see statusContext) evaluates, and tying them
// to the iteration keeps an old success from satisfying the policy after
// a new push. When no active pull request has sha as its head (a status
// set for a push Azure has not merged yet), it is posted as a commit
// status instead, so that it is not lost.
func (p *Provider) SetStatus(ctx context.Context, repo atoll.Repo, sha string, st vcs.Status) error {
	state, ok := statusStates[st.State]
	if !ok {
		return atoll.Errorf(atoll.EINVALID, "unknown commit status state %q", st.State)
	}
	gc, project, name, err := p.repoClient(ctx, repo)
	if err != nil {
		return err
	}
	genre, ctxName := statusContext(st.Context)
	desc := truncate(st.Description, maxDescription)
	var target *string
	if st.TargetURL != "" {
		target = &st.TargetURL
	}
	pulls := []int{st.Pull}
	if st.Pull == 0 {
		if pulls, err = p.pullsWithHead(ctx, gc, project, name, sha); err != nil {
			return apiError(err, "find pull requests of %s@%s", repo.FullName(), sha)
		}
	}
	if len(pulls) == 0 {
		_, err := gc.CreateCommitStatus(ctx, git.CreateCommitStatusArgs{Project: &project, RepositoryId: &name, CommitId: &sha,
			GitCommitStatusToCreate: &git.GitStatus{State: &state, Description: &desc, TargetUrl: target,
				Context: &git.GitStatusContext{Genre: &genre, Name: &ctxName}}})
		if err != nil {
			return apiError(err, "set status %q on %s@%s", st.Context, repo.FullName(), sha)
		}
		return nil
	}
	for _, number := range pulls {
		iteration, err := iterationOf(ctx, gc, project, name, number, sha)
		if err != nil {
			return apiError(err, "list iterations of %s#%d", repo.FullName(), number)
		}
		_, err = gc.CreatePullRequestStatus(ctx, git.CreatePullRequestStatusArgs{Project: &project, RepositoryId: &name, PullRequestId: &number,
			Status: &git.GitPullRequestStatus{State: &state, Description: &desc, TargetUrl: target, IterationId: iteration,
				Context: &git.GitStatusContext{Genre: &genre, Name: &ctxName}}})
		if err != nil {
			return apiError(err, "set status %q on %s#%d", st.Context, repo.FullName(), number)
		}
	}
	return nil
}

// pullsPage is how many active pull requests one list call asks for.
const pullsPage = 100

// pullsWithHead lists the active pull requests whose source head is sha.
// Azure has no lookup by source commit, so the active ones are listed.
func (p *Provider) pullsWithHead(ctx context.Context, gc *git.ClientImpl, project, name, sha string) ([]int, error) {
	var numbers []int
	for skip := 0; ; skip += pullsPage {
		prs, err := gc.GetPullRequests(ctx, git.GetPullRequestsArgs{Project: &project, RepositoryId: &name, Top: ptr(pullsPage), Skip: ptr(skip),
			SearchCriteria: &git.GitPullRequestSearchCriteria{Status: &git.PullRequestStatusValues.Active}})
		if err != nil {
			return nil, err
		}
		for _, pr := range deref(prs) {
			if pr.LastMergeSourceCommit != nil && strings.EqualFold(deref(pr.LastMergeSourceCommit.CommitId), sha) {
				numbers = append(numbers, deref(pr.PullRequestId))
			}
		}
		if len(deref(prs)) < pullsPage {
			return numbers, nil
		}
	}
}

// iterationOf is the id of the pull request's iteration whose source
// commit is sha (the latest such), nil when none is.
func iterationOf(ctx context.Context, gc *git.ClientImpl, project, name string, number int, sha string) (*int, error) {
	its, err := gc.GetPullRequestIterations(ctx, git.GetPullRequestIterationsArgs{Project: &project, RepositoryId: &name, PullRequestId: &number})
	if err != nil {
		return nil, err
	}
	var id *int
	for _, it := range deref(its) {
		if it.SourceRefCommit != nil && strings.EqualFold(deref(it.SourceRefCommit.CommitId), sha) && (id == nil || deref(it.Id) > *id) {
			id = it.Id
		}
	}
	return id, nil
}

// truncate shortens s to at most n characters, ending in "..." when cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

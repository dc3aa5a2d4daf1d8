package runner_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/vcs"
)

// A request resumed after a restart tells the plans that ended before the
// stop with their policy results, as its first run would have: a failed
// policy set is never left out of the comment.
func TestResumedPlanKeepsItsPolicyResults(t *testing.T) {
	e := newOrderEnv(t, "version: 3\nprojects:\n- {name: a, dir: a}\n- {name: b, dir: b}\n", []string{"a", "b"}, nil, 1)
	// As left by a server that stopped after a's plan and its policy
	// check were stored, before b's plan started.
	summary := atoll.Summary{Add: 1}
	req := e.leftRequest([]string{"a", "b"}, nil, func(tx *store.Tx, j *atoll.Job) error {
		if j.Project != "a" {
			return nil
		}
		plan := &atoll.Plan{JobID: j.ID, PullID: j.PullID, ProjectID: j.ProjectID, HeadSHA: j.HeadSHA, Summary: summary, File: []byte("plan"), ShowJSON: []byte("{}")}
		if err := tx.InsertUnlockedPlan(plan); err != nil {
			return err
		}
		checks := []atoll.PolicyCheck{{PolicySet: "no-production", Output: "FAIL - production is off limits", ApproveCount: 1}}
		if err := tx.InsertPolicyChecks(plan.ID, checks); err != nil {
			return err
		}
		return tx.FinishJob(j.ID, atoll.JobSucceeded, "", &summary)
	})
	e.start()
	waitRequest(t, e.db, req.ID)
	if j := e.requestJobs(req.ID)["b"]; j.State != atoll.JobSucceeded {
		t.Fatalf("b: %s %q; want planned on resume", j.State, j.Error)
	}
	posted := e.posted(0)
	for _, want := range []string{"**Policy Check Failed**", "#### Policy Set: `no-production` :x:", "production is off limits", "approve_policies"} {
		if !strings.Contains(posted, want) {
			t.Errorf("the resumed request's comment lacks %q:\n%s", want, posted)
		}
	}
}

// A state rm that does not run because the project it depends on failed
// gives back the lock its request took for it, as a plan does.
func TestSkippedStateRmGivesBackItsLock(t *testing.T) {
	e := newOrderEnv(t, "version: 3\nprojects:\n- {name: a, dir: a}\n- {name: b, dir: b, depends_on: [a]}\n", []string{"a", "b"}, nil, 1)
	e.start()
	jobs, posted := e.comment(1, "atlantis state rm terraform_data.missing")
	if a := jobs["a"]; a == nil || a.State != atoll.JobFailed {
		t.Fatalf("a: %+v; want its state rm failed (nothing in its state)\n%s", a, posted)
	}
	if b := jobs["b"]; b == nil || b.State != atoll.JobCanceled || !strings.Contains(b.Error, "depends on project `a`") {
		t.Fatalf("b: %+v; want not run, for its failed dependency", b)
	}
	if held := e.locked(1); held["b"] {
		t.Errorf("pull #1 still holds b's lock (held: %v); b never ran", held)
	}
}

// A resumed request sets the commit status of a project whose plan ended
// before the stop and was never told: the process that ran it died (or
// lost its lease and was fenced) with the status still queued, and nothing
// else would ever set it.
func TestResumedPlanSetsItsProjectStatus(t *testing.T) {
	e := newOrderEnv(t, "version: 3\nprojects:\n- {name: a, dir: a}\n- {name: b, dir: b}\n", []string{"a", "b"}, nil, 1)
	summary := atoll.Summary{Add: 1}
	req := e.leftRequest([]string{"a", "b"}, nil, func(tx *store.Tx, j *atoll.Job) error {
		if j.Project != "a" {
			return nil
		}
		plan := &atoll.Plan{JobID: j.ID, PullID: j.PullID, ProjectID: j.ProjectID, HeadSHA: j.HeadSHA, Summary: summary, File: []byte("plan"), ShowJSON: []byte("{}")}
		if err := tx.InsertUnlockedPlan(plan); err != nil {
			return err
		}
		return tx.FinishJob(j.ID, atoll.JobSucceeded, "", &summary)
	})
	e.start()
	waitRequest(t, e.db, req.ID)
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	var contexts []string
	found := false
	for _, st := range e.p.statuses {
		contexts = append(contexts, st.Context+"="+st.State)
		if strings.HasPrefix(st.Context, "atlantis/plan: a") && st.State == vcs.StatusSuccess && st.Description == "1 to add, 0 to change, 0 to destroy." {
			found = true
		}
	}
	if !found {
		t.Fatalf("no success status for project a, planned before the stop: %v", contexts)
	}
}

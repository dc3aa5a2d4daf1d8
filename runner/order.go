package runner

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// orderGroups splits a request's jobs (by index) into its execution order
// groups, lowest group first. Within a group, a job comes after the jobs of
// the group it depends on, else in request order: run one by one, every
// dependency has ended before its dependants start.
func orderGroups(jobs []*atoll.Job) [][]int {
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(jobs[a].Spec.Group, jobs[b].Spec.Group) })
	var groups [][]int
	for start := 0; start < len(idx); {
		end := start + 1
		for end < len(idx) && jobs[idx[end]].Spec.Group == jobs[idx[start]].Spec.Group {
			end++
		}
		groups = append(groups, dependenciesFirst(jobs, idx[start:end]))
		start = end
	}
	return groups
}

// dependenciesFirst orders one group so that each job follows the group's
// jobs it depends on, keeping request order otherwise. atlantis.yaml has no
// cycles (repocfg refuses them); were there one, its jobs keep their order.
func dependenciesFirst(jobs []*atoll.Job, group []int) []int {
	inGroup := map[string]int{}
	for _, i := range group {
		if jobs[i].Project != "" {
			inGroup[jobs[i].Project] = i
		}
	}
	placed := map[int]bool{}
	out := make([]int, 0, len(group))
	for len(out) < len(group) {
		progress := false
		for _, i := range group {
			if placed[i] {
				continue
			}
			ready := true
			for _, d := range jobs[i].Spec.DependsOn {
				if k, ok := inGroup[d]; ok && !placed[k] {
					ready = false
				}
			}
			if ready {
				placed[i], progress = true, true
				out = append(out, i)
			}
		}
		if !progress {
			for _, i := range group {
				if !placed[i] {
					placed[i] = true
					out = append(out, i)
				}
			}
		}
	}
	return out
}

// failed reports whether an ended job's outcome is a failure.
func (o *outcome) failed() bool { return o.final && (o.res.Error != "" || o.res.LockedBy != nil) }

// blockedBy waits for the jobs of the request j depends on and returns why j
// must not run ("" when it may), and whether Atoll is stopping. Projects
// the request does not run do not hold it back here (an apply checks them
// in runApply, as Atlantis does).
func blockedBy(j *atoll.Job, jobs []*atoll.Job, outcomes []outcome, done []chan struct{}, byName map[string]int) (reason string, stopping bool) {
	for _, d := range j.Spec.DependsOn {
		k, ok := byName[d]
		if !ok {
			continue
		}
		dep := jobs[k]
		if dep.Spec.Group > j.Spec.Group {
			return fmt.Sprintf("Not run: this project depends on project `%s`, which is in a later execution_order_group (%d, this one is %d).",
				d, dep.Spec.Group, j.Spec.Group), false
		}
		<-done[k]
		o := &outcomes[k]
		switch {
		case o.notStarted || !o.final:
			return "", true
		case o.failed():
			return fmt.Sprintf("Not run: this project depends on project `%s`, whose %s did not succeed.", d, dep.Kind), false
		}
	}
	return "", false
}

// skipJob records a queued job as not run, for reason, and tells its
// status. A plan job gives back the lock its request took for it: it made
// no plan to hold the lock for.
func (r *Runner) skipJob(ctx context.Context, w *work, j *atoll.Job, o *outcome, reason string) {
	o.res.Error = reason
	// A plan, import or state rm that never ran gives back the lock its
	// request took for it (the store decides; an apply keeps it).
	err := r.commit("skip job", func(ctx context.Context) error {
		return r.DB.SkipJob(ctx, j, reason, w.req.Source, commandText(j.Kind)+" not run")
	})
	if err != nil {
		w.log.Error("skip job", "job", j.ID, "err", err)
		return // left queued: a resumed request decides again
	}
	o.final = true
	w.log.Info("job not run", "job", j.ID, "reason", reason)
	r.reporter().jobStatus(context.WithoutCancel(ctx), w, j, vcs.StatusFailure, title(j.Kind)+" not run.", o.res)
}

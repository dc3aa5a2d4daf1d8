package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/repocfg"
)

// Drift schedules: the active node keeps the server-side config's
// drift_detection schedules in the store and queues the checks that fall
// due. The store queues a check in the transaction that moves its
// schedule on, so a failover neither skips nor doubles one.

// defaultDriftTick is how often the schedules are looked at.
const defaultDriftTick = 10 * time.Second

// driftNext is a schedule's next time after after (robfig/cron's standard
// parser, through repocfg, which checked it at start).
func driftNext(schedule string, after time.Time) (time.Time, error) {
	return repocfg.DriftSettings{Schedule: schedule}.Next(after)
}

// startDriftSchedules runs the schedules while the runner runs.
func (r *Runner) startDriftSchedules() {
	if r.ServerConfig == nil || !r.ServerConfig.HasDrift() {
		return
	}
	tick := r.DriftTick
	if tick <= 0 {
		tick = defaultDriftTick
	}
	r.auditAutoRemediation()
	r.sched.workers.Add(1)
	go func() {
		defer r.sched.workers.Done()
		ctx := r.sched.jobCtx
		t := time.NewTicker(tick)
		defer t.Stop()
		branches := map[int64]string{}     // default branches, by repository
		files := map[int64]repoDriftFile{} // repository files' blocks, by repository
		for {
			if err := r.driftTick(ctx, branches, files); err != nil && ctx.Err() == nil {
				r.Logger.Warn("drift schedules", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-r.sched.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// driftTick syncs the schedules with the config and queues the due checks.
func (r *Runner) driftTick(ctx context.Context, branches map[int64]string, files map[int64]repoDriftFile) error {
	repos, err := r.DB.Repos(ctx)
	if err != nil {
		return err
	}
	var want []atoll.DriftSchedule
	for _, repo := range repos {
		if !r.Allowlist.Allows(repo.Host, repo.Owner, repo.Name) {
			continue
		}
		s, ok := r.ServerConfig.DriftFor(serverRepoID(repo), "")
		if f := r.repoDriftFile(ctx, repo, branches, files); f != nil {
			s, ok = *f, true // the repository's own block, where allowed
		}
		if !ok || !s.Enabled {
			continue
		}
		branch := s.Branch
		if branch == "" {
			if branch = branches[repo.ID]; branch == "" {
				if branch, err = r.defaultBranch(ctx, repo); err != nil {
					r.Logger.Warn("drift schedule: default branch", "repo", repo.FullName(), "err", err)
					continue
				}
				branches[repo.ID] = branch
			}
		}
		want = append(want, atoll.DriftSchedule{RepoID: repo.ID, Branch: branch, Schedule: s.Schedule, Projects: s.Projects})
	}
	if err := r.commit("sync drift schedules", func(ctx context.Context) error { return r.DB.SyncDriftSchedules(ctx, want, driftNext) }); err != nil {
		return err
	}
	var queued []*atoll.Request
	err = r.commit("queue due drift checks", func(ctx context.Context) (err error) {
		queued, err = r.DB.QueueDueDrift(ctx, driftNext)
		return err
	})
	if err != nil {
		return err
	}
	for _, q := range queued {
		r.Logger.Info("drift check due", "request", q.ID, "repo", q.Repo)
	}
	if len(queued) > 0 {
		r.sched.Wake()
	}
	return nil
}

// defaultBranch asks the repository's remote for its default branch.
func (r *Runner) defaultBranch(ctx context.Context, repo *atoll.Repo) (string, error) {
	p, err := r.provider(repo.VCS)
	if err != nil {
		return "", err
	}
	remote, err := cloneRemote(ctx, &work{repo: repo, vcs: p})
	if err != nil {
		return "", err
	}
	return r.Workdirs.DefaultBranch(ctx, git.Spec{Key: workdirKey(repo), Remote: remote})
}

// auditAutoRemediation records, each time a node becomes active, which
// server-side entries make reconciles apply without an approval: the
// audit log says who configured it (the server config, at this line).
func (r *Runner) auditAutoRemediation() {
	for _, e := range r.ServerConfig.Repos {
		if e.Drift == nil || e.Drift.Remediation != repocfg.RemediationAuto {
			continue
		}
		ev := atoll.Event{Actor: "server config", Action: "drift.remediation.auto", Source: atoll.SourceAtoll,
			Detail: fmt.Sprintf("repos entry %s (line %d) sets drift_detection remediation auto: its reconciles apply without an approval", e.IDString(), e.Drift.Line)}
		if err := r.commit("audit auto remediation", func(ctx context.Context) error { return r.DB.AddEvent(ctx, ev) }); err != nil {
			r.Logger.Warn("audit auto remediation", "err", err)
		}
	}
}

// repoDriftFile is a repository file's drift_detection block, as read at
// the head of its default branch at most every repoDriftEvery.
type repoDriftFile struct {
	at       time.Time
	settings *repocfg.DriftSettings
}

const repoDriftEvery = 5 * time.Minute

// repoDriftFile is the drift_detection block in force for repo when its
// own file sets one (allowed_overrides: [drift_detection]), else nil. It
// reads the file from the mirror at the default branch's head, at most
// every repoDriftEvery; a file Atoll refuses leaves the server's block.
func (r *Runner) repoDriftFile(ctx context.Context, repo *atoll.Repo, branches map[int64]string, files map[int64]repoDriftFile) *repocfg.DriftSettings {
	if f, ok := files[repo.ID]; ok && time.Since(f.at) < repoDriftEvery {
		return f.settings
	}
	files[repo.ID] = repoDriftFile{at: time.Now()}
	id := serverRepoID(repo)
	if !r.ServerConfig.AllowsDriftOverride(id) {
		return nil
	}
	p, err := r.provider(repo.VCS)
	if err != nil {
		return nil
	}
	remote, err := cloneRemote(ctx, &work{repo: repo, vcs: p})
	if err != nil {
		return nil
	}
	spec := git.Spec{Key: workdirKey(repo), Remote: remote}
	branch := branches[repo.ID]
	if branch == "" {
		if branch, err = r.Workdirs.DefaultBranch(ctx, spec); err != nil {
			return nil
		}
		branches[repo.ID] = branch
	}
	sha, err := r.Workdirs.ResolveBranch(ctx, spec, branch)
	if err != nil {
		r.Logger.Warn("drift schedule: repository file", "repo", repo.FullName(), "err", err)
		return nil
	}
	names := repocfg.FileNames
	if f := r.ServerConfig.ConfigFile(id); f != "" {
		names = []string{f}
	}
	for _, name := range names {
		data, err := r.Workdirs.ShowFile(ctx, spec, sha, name)
		if err != nil {
			continue
		}
		cfg, err := repocfg.Parse(data)
		if err == nil {
			cfg, err = r.ServerConfig.Merge(id, cfg)
		}
		if err != nil {
			r.Logger.Warn("drift schedule: repository file refused", "repo", repo.FullName(), "file", name, "err", atoll.ErrorMessage(err))
			return nil
		}
		files[repo.ID] = repoDriftFile{at: time.Now(), settings: cfg.Drift}
		return cfg.Drift
	}
	return nil
}

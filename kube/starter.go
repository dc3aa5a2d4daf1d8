package kube

import (
	"context"
	"fmt"
	"strings"

	"github.com/atollhq/atoll/dispatch"
)

// Starter runs a pool's jobs as Kubernetes Jobs: the dispatcher's
// dispatch.Starter of a pool configured with a pod template.
type Starter struct {
	Launcher *Launcher
	Pool     string
	Template PodTemplate
	// ServerURLs are the URLs the pods reach the control plane at.
	ServerURLs []string
}

var _ dispatch.Starter = (*Starter)(nil)

// Start launches attempt's Job with the secret in its Secret.
func (s *Starter) Start(ctx context.Context, c dispatch.Claimant, secret string) error {
	return s.Launcher.Launch(ctx, Job{JobID: c.JobID, Attempt: c.Attempt, Pool: c.Pool, Repo: c.Repo, Pull: c.Pull, Project: c.Project,
		ServerURLs: s.ServerURLs, Token: secret, Template: s.Template})
}

// Started reports whether attempt's Job exists and is not being deleted.
func (s *Starter) Started(ctx context.Context, jobID int64, attempt int) (bool, error) {
	return s.Launcher.Exists(ctx, jobID, attempt)
}

// Follow turns Watch's states into the dispatcher's events: a pending pod's
// reason and a running pod are notes for the job's log; its end is Ended,
// with the failure in words.
func (s *Starter) Follow(ctx context.Context, jobID int64, attempt int) (<-chan dispatch.ClaimantEvent, error) {
	states, err := s.Launcher.Watch(ctx, jobID, attempt)
	if err != nil {
		return nil, err
	}
	out := make(chan dispatch.ClaimantEvent, 4)
	go func() {
		defer close(out)
		for st := range states {
			var ev dispatch.ClaimantEvent
			switch st.State {
			case Pending:
				if st.Message == "" || st.Message == "waiting for the Job's pod" {
					continue
				}
				ev.Note = fmt.Sprintf("Kubernetes: pod %s is pending: %s", st.Pod, st.Message)
			case Running:
				ev.Note = fmt.Sprintf("Kubernetes: pod %s is running.", st.Pod)
			case Succeeded:
				ev.Ended = true
			case Failed:
				ev.Ended = true
				ev.Failure = "the worker pod failed"
				if st.Failure != nil {
					ev.Failure = st.Failure.Message
				}
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Ended {
				return
			}
		}
	}()
	return out, nil
}

// Stop deletes attempt's Job in the foreground.
func (s *Starter) Stop(ctx context.Context, jobID int64, attempt int) error {
	return s.Launcher.Delete(ctx, jobID, attempt)
}

// Describe names attempt's Job.
func (s *Starter) Describe(jobID int64, attempt int) string {
	return fmt.Sprintf("Kubernetes Job %s (namespace %s)", Name(jobID, attempt), s.Launcher.Namespace)
}

// Where is the Jobs' namespace.
func (s *Starter) Where() string { return "namespace " + s.Launcher.Namespace }

// Sweep deletes the running Jobs of this pool that keep refuses.
func (s *Starter) Sweep(ctx context.Context, keep func(jobID int64, attempt int) bool) error {
	launched, err := s.Launcher.List(ctx)
	if err != nil {
		return err
	}
	var errs []string
	for _, l := range launched {
		if l.State != Running || l.Deleting || l.Pool != labelValue(s.Pool) || keep(l.JobID, l.Attempt) {
			continue
		}
		if err := s.Launcher.Delete(ctx, l.JobID, l.Attempt); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("sweep: %s", strings.Join(errs, "; "))
	}
	return nil
}

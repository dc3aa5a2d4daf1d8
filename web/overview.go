package web

import (
	"context"
	"net/http"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// The overview's tables show at most this many rows (the runs and locks
// pages show the rest).
const (
	overviewRows = 50
	overviewRuns = 20
)

// handleOverview shows the overview page, or with ?section=NAME only that
// section's content, for live.js to swap in place when it changed.
func (s *Server) handleOverview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d := templates.OverviewPage{Meta: s.pageMeta(ctx)}
	section := r.URL.Query().Get("section")
	if section == "" {
		for _, name := range overviewSections {
			if err := s.loadOverview(ctx, name, &d); err != nil {
				s.pageError(w, r, err)
				return
			}
		}
		s.renderPage(w, r, http.StatusOK, templates.Overview(d))
		return
	}
	if !validSection[section] {
		s.pageError(w, r, atoll.Errorf(atoll.EINVALID, "No section %q on this page.", section))
		return
	}
	if err := s.loadOverview(ctx, section, &d); err != nil {
		s.pageError(w, r, err)
		return
	}
	s.renderPage(w, r, http.StatusOK, templates.OverviewSection(section, d))
}

var overviewSections = []string{templates.SectionNode, templates.SectionJobs, templates.SectionRuns, templates.SectionLocks, templates.SectionPulls}

var validSection = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range overviewSections {
		m[s] = true
	}
	return m
}()

// loadOverview reads what section shows into d.
func (s *Server) loadOverview(ctx context.Context, section string, d *templates.OverviewPage) (err error) {
	switch section {
	case templates.SectionNode:
		d.Node = s.nodeStatus(ctx)
		if s.Cluster != nil && d.Node.Role != atoll.RoleActive {
			if rep := s.Cluster.Replication(ctx); rep != nil {
				d.LagMS = rep.LagMS
			}
		}
		var drifted []*atoll.DriftProject
		if drifted, err = s.DB.DriftProjects(ctx, atoll.DriftFilter{State: atoll.DriftDrifted}); err == nil {
			d.Drifted, d.DriftShown = len(drifted), s.Drift != nil || len(drifted) > 0
		}
	case templates.SectionJobs:
		if d.Running, err = s.DB.Jobs(ctx, atoll.JobFilter{State: atoll.JobRunning, Limit: overviewRows}); err == nil {
			d.Queued, err = s.DB.Jobs(ctx, atoll.JobFilter{State: atoll.JobQueued, Limit: overviewRows})
		}
		if err == nil && s.WorkerAdmin != nil {
			// The pools' queues: a failure only leaves them out.
			if o, werr := s.WorkerAdmin.Workers(ctx); werr == nil {
				d.WorkerQueues = o.Queued
				if d.WorkerQueues == nil {
					d.WorkerQueues = map[string]int{}
				}
			} else {
				s.Logger.Warn("read worker pools", "err", werr)
			}
		}
	case templates.SectionRuns:
		d.Recent, err = s.DB.FinishedJobs(ctx, overviewRuns)
	case templates.SectionLocks:
		d.Locks, d.LockCount, err = s.DB.NewestLocks(ctx, overviewRows)
	case templates.SectionPulls:
		d.Pulls, d.PullCount, err = s.DB.NewestPulls(ctx, atoll.PullOpen, overviewRows)
	}
	return err
}

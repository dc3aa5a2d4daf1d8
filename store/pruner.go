package store

import (
	"context"
	"log/slog"
	"time"
)

// Pruner applies a retention policy in the background: once when it starts,
// then every Every. It needs nothing from the runner.
type Pruner struct {
	DB        *DB
	Retention Retention
	Every     time.Duration // 0: one hour
	Logger    *slog.Logger  // nil: slog.Default()
}

// Run prunes until ctx ends. Failures are logged and retried at the next
// tick: pruning late is harmless.
func (p *Pruner) Run(ctx context.Context) {
	every := p.Every
	if every <= 0 {
		every = time.Hour
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	r := p.Retention
	if r.LogLines <= 0 && r.Webhooks <= 0 && r.Events <= 0 && r.PlanFiles <= 0 {
		log.Info("retention: every window is 0, keeping everything")
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		p.once(ctx, log)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *Pruner) once(ctx context.Context, log *slog.Logger) {
	start := time.Now()
	res, err := p.DB.Prune(ctx, p.Retention)
	attrs := []any{"log_lines", res.LogLines, "webhooks", res.Webhooks, "events", res.Events, "plan_files", res.PlanFiles, "notifications", res.Notifications,
		"vacuumed_pages", res.Vacuumed, "batches", res.Batches, "longest_batch", res.Longest, "writing", res.Writing, "duration", time.Since(start)}
	switch {
	case err != nil && ctx.Err() != nil:
		log.Info("retention: stopped", attrs...)
	case err != nil:
		log.Error("retention: prune failed", append(attrs, "err", err)...)
	case res.Total() > 0:
		log.Info("retention: pruned", attrs...)
	default:
		log.Debug("retention: nothing to prune", attrs...)
	}
}

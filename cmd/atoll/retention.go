package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/atollhq/atoll/store"
)

// retentionFlags registers the --retain-* flags; each window is how long
// that kind of history is kept, 0 meaning forever.
func retentionFlags(fs *flag.FlagSet, r *store.Retention) {
	d := store.DefaultRetention
	fs.DurationVar(&r.LogLines, "retain-logs", d.LogLines, "keep a job's log this long after the job finished (0: forever)")
	fs.DurationVar(&r.Webhooks, "retain-webhooks", d.Webhooks, "keep the record of a received webhook this long; duplicate deliveries are recognised within it (0: forever)")
	fs.DurationVar(&r.Events, "retain-events", d.Events, "keep audit events this long (0: forever)")
	fs.DurationVar(&r.PlanFiles, "retain-plan-files", d.PlanFiles, "keep the file of an applied or discarded plan this long; pending plans are always kept (0: forever)")
}

func validateRetention(r store.Retention) error {
	for _, w := range []struct {
		flag string
		d    time.Duration
	}{{"--retain-logs", r.LogLines}, {"--retain-webhooks", r.Webhooks}, {"--retain-events", r.Events}, {"--retain-plan-files", r.PlanFiles}} {
		if w.d < 0 {
			return fmt.Errorf("%s must not be negative (0 keeps forever)", w.flag)
		}
	}
	return nil
}

// startPruner starts retention in the background, independent of the
// runner. Once there is a standby, only the active node may run it: a
// standby's database is a replica and is never written.
func (m *Main) startPruner() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	r := m.Config.Retention
	r.Notifications = r.Webhooks // sent notifications: the outgoing side of webhooks
	p := &store.Pruner{DB: m.DB, Retention: r, Logger: m.Logger}
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	m.stopPruner = func() {
		cancel()
		<-done
	}
}

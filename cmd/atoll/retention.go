package main

import (
	"context"

	"github.com/atollhq/atoll/store"
)

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

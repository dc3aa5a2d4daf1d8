// Package node runs this process's part in a pair of Atoll nodes that share
// a Litestream replica. Every node starts as a standby: it follows the
// replica and tries to take the lease. The holder promotes itself (catch up
// with the replica, open the database read-write with every commit
// replicated before it is acknowledged, record the epoch, start the work)
// and renews the lease; when it cannot renew before its local deadline it
// fences itself: the work is killed, no upload leaves (the replica client
// refuses them past the deadline), and the process exits so that its
// supervisor starts it again as a standby with a fresh copy.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/replica"
	"github.com/atollhq/atoll/store"
)

// Config is what a node needs. Activate and Deactivate belong to the
// caller (cmd/atoll): they start and stop the work on the database.
type Config struct {
	ID           string
	AdvertiseURL string // how the other node reaches this one
	Version      string
	ReplicaURL   string // for status, credentials redacted
	Client       litestream.ReplicaClient
	Leaser       replica.Leaser
	TTL          time.Duration // the lease's time to live; renewed every TTL/3
	DB           *store.DB     // opened here on promotion, at its Path
	Logger       *slog.Logger
	// Changes, if set, is told (TopicNode) when this node's role changes
	// and, on a standby, when its copy moves on: the live pages re-read.
	Changes atoll.ChangeService

	// Activate starts the work once the database is open, writable and
	// current, with epoch recorded. An error fences the node.
	Activate func(ctx context.Context, epoch int64) error
	// Deactivate stops the work: gracefully (finish running jobs, up to the
	// stop timeout) when now is false, at once (kill Terraform) when true.
	Deactivate func(now bool)
}

// Node is one node's role, lease and replication.
type Node struct {
	cfg Config

	mu         sync.Mutex
	role       string
	ready      bool
	epoch      int64
	active     *replica.Lease // the last lease seen: ours when active
	follower   *replica.Follower
	replicator *replica.Replicator
	deadline   time.Time // local: past it, this node must no longer write
	replCache  *atoll.ReplicationStatus
	replAt     time.Time

	fenced   chan struct{}
	fenceErr error
	stopping bool          // Stop was called
	stop     chan struct{} // closed by Stop: ends run
	done     chan struct{}
	once     sync.Once
}

// New returns a standby node; Start runs it.
func New(cfg Config) *Node {
	if cfg.TTL <= 0 {
		cfg.TTL = 15 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Node{cfg: cfg, role: atoll.RoleStandby, fenced: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
}

// Fenced is closed when this node lost its lease while active; Err says why.
// The process must then exit: its work was killed and it may not write.
func (n *Node) Fenced() <-chan struct{} { return n.fenced }

// Err is why the node fenced itself.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.fenceErr
}

// Status implements atoll.NodeService.
func (n *Node) Status(ctx context.Context) atoll.NodeStatus {
	n.mu.Lock()
	st := atoll.NodeStatus{Node: n.cfg.ID, Role: n.role, Epoch: n.epoch, Version: n.cfg.Version, Ready: n.ready}
	if l := n.active; l != nil {
		st.ActiveNode, st.ActiveURL = l.Owner, l.AdvertiseURL
		exp := l.ExpiresAt
		st.LeaseExpiresAt = &exp
		if st.Epoch == 0 {
			st.Epoch = l.Generation
		}
	}
	n.mu.Unlock()
	return st
}

// Replication implements atoll.NodeService: the positions of this node's
// copy and of the replica. It lists the replica, so it is cached briefly.
func (n *Node) Replication(ctx context.Context) *atoll.ReplicationStatus {
	n.mu.Lock()
	if n.replCache != nil && time.Since(n.replAt) < time.Second {
		r := *n.replCache
		n.mu.Unlock()
		return &r
	}
	follower, replicator := n.follower, n.replicator
	n.mu.Unlock()
	r := &atoll.ReplicationStatus{URL: replica.Redact(n.cfg.ReplicaURL)}
	switch {
	case replicator != nil:
		if local, remote, last, err := replicator.Status(ctx); err == nil {
			r.LocalTXID, r.RemoteTXID = int64(local), int64(remote)
			if !last.IsZero() {
				r.LastSync = &last
			}
		}
	case follower != nil:
		if lag, err := follower.Lag(ctx); err == nil {
			r.LocalTXID, r.RemoteTXID = int64(lag.Local), int64(lag.Remote)
			r.LagMS = lag.Behind.Milliseconds()
		}
	}
	n.mu.Lock()
	n.replCache, n.replAt = r, time.Now()
	n.mu.Unlock()
	c := *r
	return &c
}

// changed tells the live pages that this node's role or copy changed.
func (n *Node) changed() {
	if n.cfg.Changes != nil {
		n.cfg.Changes.Publish(atoll.Change{Topic: atoll.TopicNode})
	}
}

// Start follows the replica and starts trying to take the lease; it
// returns at once.
func (n *Node) Start(ctx context.Context) error {
	f := replica.NewFollower(n.cfg.Client, n.cfg.DB.Path, 0)
	f.Logger = n.cfg.Logger
	f.Moved = n.changed
	if err := f.Start(ctx); err != nil {
		return err
	}
	n.mu.Lock()
	n.follower = f
	n.mu.Unlock()
	go n.openCopy(ctx, f)
	go n.run(ctx)
	return nil
}

// openCopy opens the standby's copy for reading once the follower has
// restored it, so that the standby serves read-only pages and the read API
// itself (a little behind the active) instead of forwarding them.
func (n *Node) openCopy(ctx context.Context, f *replica.Follower) {
	for {
		if remote, err := replica.MaxTXID(ctx, n.cfg.Client); err == nil && remote > 0 {
			if err := f.CatchUp(ctx); err == nil {
				break
			}
		}
		select {
		case <-n.stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	if n.openReader(f) {
		n.changed() // pages now come from this copy
	}
}

// openReader opens the standby's copy for reading, unless promotion began
// (the copy is then the active's database).
func (n *Node) openReader(f *replica.Follower) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.follower != f {
		return false
	}
	if err := n.cfg.DB.OpenReader(replica.ReadOnlyDSN(n.cfg.DB.Path)); err != nil {
		n.cfg.Logger.Warn("standby: cannot read the local copy; pages are forwarded", "err", err)
		return false
	}
	return true
}

// run is the standby's election loop, then the active's renewal loop.
func (n *Node) run(ctx context.Context) {
	defer close(n.done)
	log := n.cfg.Logger.With("node", n.cfg.ID)
	for {
		lease, err := n.cfg.Leaser.Acquire(ctx, n.cfg.ID, n.cfg.AdvertiseURL, n.cfg.TTL)
		if err == nil {
			if err := n.promote(ctx, lease, log); err != nil {
				n.fence(fmt.Errorf("promotion failed: %w", err))
				return
			}
			n.renew(ctx, log)
			return
		}
		wait := n.cfg.TTL / 3
		var held *replica.LeaseHeldError
		if errors.As(err, &held) {
			holder := held.Holder
			n.mu.Lock()
			n.active = &holder
			n.mu.Unlock()
			// Try again right when the holder's lease runs out.
			if until := time.Until(holder.ExpiresAt) + 20*time.Millisecond; until < wait {
				wait = max(until, 20*time.Millisecond)
			}
		} else {
			log.Warn("lease: cannot reach the replica", "err", err)
		}
		select {
		case <-time.After(wait):
		case <-n.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// promote makes this node the active one: catch up, never promote a stale
// copy, replicate every commit before it is acknowledged, record the epoch,
// start the work.
func (n *Node) promote(ctx context.Context, lease *replica.Lease, log *slog.Logger) error {
	start := time.Now()
	n.mu.Lock()
	n.active, n.epoch, n.deadline = lease, lease.Generation, lease.Deadline(n.margin())
	follower := n.follower
	n.mu.Unlock()
	log.Info("lease taken: promoting", "epoch", lease.Generation)
	path := n.cfg.DB.Path
	remote, err := replica.MaxTXID(ctx, n.cfg.Client)
	if err != nil {
		return err
	}
	if remote > 0 {
		catchCtx, cancel := context.WithDeadline(ctx, n.deadlineNow())
		err = follower.CatchUp(catchCtx)
		cancel()
		if err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.follower = nil // and openCopy opens no reader from now on
	n.mu.Unlock()
	if err := n.cfg.DB.CloseReader(); err != nil {
		return err
	}
	if err := follower.Stop(ctx); err != nil {
		return err
	}
	if remote > 0 {
		// Never promote a copy that is not the replica's newest state: it
		// would roll the replica back. Restore it afresh instead.
		if current, err := replica.IsCurrent(ctx, n.cfg.Client, path); err != nil || !current {
			log.Warn("local copy is not current: restoring it afresh", "err", err)
			if err := replica.Wipe(path); err != nil {
				return err
			}
			if err := replica.Restore(ctx, n.cfg.Client, path, true); err != nil {
				return err
			}
		}
	} else if err := replica.Wipe(path); err != nil {
		return err
	}
	// The store migrates before Litestream opens the file; from then on
	// every commit is in the replica before it is acknowledged, and no
	// upload leaves this node past its lease deadline.
	// Catching up and restoring take time out of the lease: renew it before
	// the first upload, and again before the work starts.
	if err := n.renewOnce(ctx); err != nil {
		return err
	}
	client := replica.NewFencedClient(n.cfg.Client, n.deadlineNow)
	rep := replica.NewReplicator(path, client, n.cfg.Logger)
	db := n.cfg.DB
	db.AfterCommit = rep.Sync
	db.NoAutoCheckpoint = true
	if err := db.Open(ctx); err != nil {
		return err
	}
	if err := rep.Open(ctx); err != nil {
		return err
	}
	n.mu.Lock()
	n.replicator = rep
	n.mu.Unlock()
	if err := n.renewOnce(ctx); err != nil {
		return err
	}
	err = db.Update(ctx, func(tx *store.Tx) error { return tx.RecordEpoch(lease.Generation, n.cfg.ID, n.cfg.AdvertiseURL) })
	if err != nil {
		return err
	}
	if err := n.cfg.Activate(ctx, lease.Generation); err != nil {
		return err
	}
	n.mu.Lock()
	n.role, n.ready = atoll.RoleActive, true
	n.mu.Unlock()
	n.changed()
	log.Info("active", "epoch", lease.Generation, "promotion_ms", time.Since(start).Milliseconds())
	return nil
}

// renewOnce renews the lease now, or fails if it cannot before the
// deadline of the one held (the promotion and the renewal loop both use it).
func (n *Node) renewOnce(ctx context.Context) error {
	n.mu.Lock()
	old, deadline := n.active, n.deadline
	n.mu.Unlock()
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	lease, err := n.cfg.Leaser.Renew(rctx, old, n.cfg.TTL)
	if err != nil {
		return fmt.Errorf("renew the lease: %w", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if time.Now().After(n.deadline) {
		return errRenewedLate
	}
	// The deadline counts from when the renewal was sent, not answered.
	n.active, n.deadline = lease, lease.Deadline(n.margin())
	return nil
}

var errRenewedLate = errors.New("the lease was renewed only after its deadline")

// margin is how long before the lease's expiry the active stops trusting
// it: the standby's clock may run a little ahead.
func (n *Node) margin() time.Duration { return n.cfg.TTL / 5 }

// Deadline is the instant until which this node may act: upload to the
// replica, and write to VCS hosts and notification webhooks (atoll.Fence).
// It is the zero time on a standby, on a node still taking the lease, on a
// fenced node, and once a stopping node is about to release its lease.
func (n *Node) Deadline() time.Time { return n.deadlineNow() }

func (n *Node) deadlineNow() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.deadline
}

// renew keeps the lease every TTL/3; a watchdog fences the node the moment
// its local deadline passes without a renewal, even while a renewal hangs.
// A renewal is due TTL/3 after the lease was last written, not after the
// promotion: a promotion longer than TTL-margin-TTL/3 would otherwise let
// the deadline pass before the first renewal.
func (n *Node) renew(ctx context.Context, log *slog.Logger) {
	watchdog := time.AfterFunc(time.Until(n.deadlineNow()), func() { n.fence(errors.New("the lease was not renewed before its deadline")) })
	defer watchdog.Stop()
	next := time.NewTimer(time.Until(n.renewalDue()))
	defer next.Stop()
	for {
		select {
		case <-next.C:
		case <-n.stop:
			return
		case <-n.fenced:
			return
		case <-ctx.Done():
			return
		}
		err := n.renewOnce(ctx)
		switch {
		case errors.Is(err, replica.ErrLeaseLost) || errors.Is(err, errRenewedLate):
			n.fence(err)
			return
		case err != nil:
			log.Warn("lease renewal failed: retrying", "err", err, "deadline", n.deadlineNow())
			next.Reset(n.cfg.TTL / 3)
			continue
		}
		watchdog.Reset(time.Until(n.deadlineNow()))
		next.Reset(time.Until(n.renewalDue()))
	}
}

// renewalDue is TTL/3 after the lease was last written: its deadline is
// TTL-margin after that.
func (n *Node) renewalDue() time.Time {
	return n.deadlineNow().Add(n.margin() - n.cfg.TTL + n.cfg.TTL/3)
}

// fence stops this node from writing at once: not ready, the work killed.
// Uploads are already refused by the fenced replica client.
func (n *Node) fence(err error) {
	n.once.Do(func() {
		n.cfg.Logger.Error("fenced: this node stops writing", "node", n.cfg.ID, "err", err)
		n.mu.Lock()
		wasActive := n.role == atoll.RoleActive
		// A zero deadline makes the replica client refuse every upload
		// from now on, even before the lease's own deadline.
		n.role, n.ready, n.fenceErr, n.deadline = atoll.RoleStandby, false, err, time.Time{}
		n.mu.Unlock()
		if wasActive && n.cfg.Deactivate != nil {
			n.cfg.Deactivate(true)
		}
		n.changed()
		close(n.fenced)
	})
}

// Stop ends the node's part. An active node stops its work gracefully,
// closes the database (its last commits replicated), and releases the lease
// so that the standby takes over within one poll. It keeps renewing the
// lease until then: were it to run out while jobs finish (up to the stop
// timeout), the standby would take over while Terraform still runs here.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	if n.stopping {
		n.mu.Unlock()
		return nil
	}
	n.stopping = true
	wasActive := n.role == atoll.RoleActive
	n.ready = false
	n.mu.Unlock()
	var errs []error
	closeDB := func() {
		n.cfg.Deactivate(false)
		errs = append(errs, n.cfg.DB.Close())
		n.mu.Lock()
		rep := n.replicator
		n.mu.Unlock()
		if rep != nil {
			errs = append(errs, rep.Close(ctx))
		}
	}
	if wasActive {
		closeDB()
	}
	close(n.stop) // ends the election or the renewals
	<-n.done
	n.mu.Lock()
	active, follower, lease := n.role == atoll.RoleActive, n.follower, n.active
	n.role, n.ready = atoll.RoleStandby, false
	n.mu.Unlock()
	if follower != nil {
		errs = append(errs, n.cfg.DB.CloseReader(), follower.Stop(ctx))
	}
	if active && !wasActive { // promoted while stopping
		closeDB()
	}
	if active {
		// The work has stopped; once the lease is released the other node
		// may take over at once, so nothing may leave this one from now on.
		n.mu.Lock()
		n.deadline = time.Time{}
		n.mu.Unlock()
		select {
		case <-n.fenced:
		default:
			errs = append(errs, n.cfg.Leaser.Release(ctx, lease))
		}
	}
	return errors.Join(errs...)
}

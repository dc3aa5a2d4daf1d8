package notify

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/atollhq/atoll"
)

// Outbox delivers the store's pending notifications. Only the active node
// runs it; a notification is sent at least once (a node that dies while
// sending leaves it to the next one, after the claim's lease).
type Outbox struct {
	Sender *Sender
	DB     atoll.NotificationService
	Logger *slog.Logger
	// Backoff is the wait after a first failed attempt, doubled after each
	// next one up to MaxBackoff; a notification is given up after MaxAge
	// or MaxAttempts. Zero values are the defaults below.
	Backoff, MaxBackoff, MaxAge time.Duration
	MaxAttempts                 int

	fencedOnce sync.Once
}

const (
	DefaultBackoff     = 10 * time.Second
	DefaultMaxBackoff  = 30 * time.Minute
	DefaultMaxAge      = 24 * time.Hour
	DefaultMaxAttempts = 100
	// claimLease is how long a claimed notification is left alone: longer
	// than a batch takes to send.
	claimLease = 5 * time.Minute
	claimBatch = 10
	// idlePoll rechecks the store without a wake-up (the first start, a
	// clock that jumped).
	idlePoll = 30 * time.Second
)

// Run delivers until stop is closed; wake says an apply queued some. ctx
// bounds each delivery (cancelled, the send is abandoned and retried).
func (o *Outbox) Run(ctx context.Context, wake, stop <-chan struct{}) {
	for {
		wait := idlePoll
		next, ok, err := o.DB.NextNotificationAt(ctx)
		switch {
		case err != nil:
			o.Logger.Error("notifications: read the outbox", "err", err)
		case ok && !next.After(o.DB.Clock()):
			o.deliverDue(ctx, stop)
			select { // rows still due (fenced, failing claims) must not keep a stopped loop alive
			case <-stop:
				return
			default:
			}
			continue
		case ok:
			wait = min(wait, next.Sub(o.DB.Clock()))
		}
		t := time.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			return
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

func (o *Outbox) deliverDue(ctx context.Context, stop <-chan struct{}) {
	// A node past its lease deadline claims nothing: it could not send.
	if err := o.Sender.Fence.Check("claim notifications"); err != nil {
		o.fenced(err)
		select {
		case <-stop:
		case <-time.After(time.Second):
		}
		return
	}
	due, err := o.DB.ClaimNotifications(ctx, claimBatch, claimLease)
	if err != nil {
		o.Logger.Error("notifications: claim", "err", err)
		select { // a write that fails now will for a while: do not spin
		case <-stop:
		case <-time.After(time.Second):
		}
		return
	}
	for _, n := range due {
		select {
		case <-stop:
			return // claimed, not sent: sent after the lease
		default:
		}
		o.deliver(ctx, n)
	}
}

func (o *Outbox) deliver(ctx context.Context, n atoll.Notification) {
	log := o.Logger.With("notification", n.ID, "job", n.JobID, "webhook", n.Dest, "kind", n.Kind, "attempt", n.Attempts)
	err := o.Sender.Deliver(ctx, n.Dest, n.Kind, n.Payload)
	if errors.Is(err, atoll.ErrFenced) {
		// Not an attempt: nothing was sent, and this node may no longer
		// record anything. The next active node sends it once the claim
		// lapses.
		o.fenced(err)
		return
	}
	if err == nil {
		if err := o.DB.NotificationSent(context.WithoutCancel(ctx), n.ID); err != nil {
			log.Error("notifications: sent, but not recorded (it may be sent again)", "err", err)
			return
		}
		log.Info("notification sent")
		return
	}
	msg := err.Error()
	now := o.DB.Clock()
	if n.Attempts >= orDefault(o.MaxAttempts, DefaultMaxAttempts) || now.Sub(n.CreatedAt) >= orDefault(o.MaxAge, DefaultMaxAge) {
		if err := o.DB.NotificationFailed(context.WithoutCancel(ctx), n.ID, msg); err != nil {
			log.Error("notifications: record the failure", "err", err)
		}
		log.Error("notification failed: giving up", "err", msg)
		return
	}
	wait := orDefault(o.Backoff, DefaultBackoff)
	for i := 1; i < n.Attempts && wait < orDefault(o.MaxBackoff, DefaultMaxBackoff); i++ {
		wait *= 2
	}
	wait = min(wait, orDefault(o.MaxBackoff, DefaultMaxBackoff))
	// Recorded before it is logged: once the log says so, a node taking
	// over retries it on time (not after the claim's lease).
	if err := o.DB.NotificationRetry(context.WithoutCancel(ctx), n.ID, now.Add(wait), msg); err != nil {
		log.Error("notifications: record the retry", "err", err)
	}
	log.Warn("notification failed: retrying", "err", msg, "retry_in", wait)
}

// fenced logs, once, that this node stopped sending notifications.
func (o *Outbox) fenced(err error) {
	o.fencedOnce.Do(func() { o.Logger.Error("fenced: notifications are no longer sent from this node", "err", err) })
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

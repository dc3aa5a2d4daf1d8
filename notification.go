package atoll

import (
	"context"
	"time"
)

// Notification is one apply result on its way to one destination of the
// webhooks list (the outbox of migration 0011). Dest and Kind name the
// destination; its URL, channel and credentials are never stored.
type Notification struct {
	ID        int64
	JobID     int64
	Dest      int
	Kind      string
	Payload   []byte // JSON
	Attempts  int
	CreatedAt time.Time
	NextAt    time.Time
	LastError string
}

// NotificationService is the outbox of apply notifications, as the sender
// loop (runner/notify) drains it.
type NotificationService interface {
	// NextNotificationAt is when the next pending notification is due.
	NextNotificationAt(ctx context.Context) (next time.Time, ok bool, err error)
	// ClaimNotifications claims up to limit due notifications for lease.
	ClaimNotifications(ctx context.Context, limit int, lease time.Duration) ([]Notification, error)
	NotificationSent(ctx context.Context, id int64) error
	NotificationRetry(ctx context.Context, id int64, next time.Time, msg string) error
	NotificationFailed(ctx context.Context, id int64, msg string) error
	Clock
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

func TestNotificationOutbox(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	db.Now = func() time.Time { return now }

	var ids []int64
	err := db.Update(ctx, func(tx *store.Tx) error {
		ids = nil
		for i, kind := range []string{"http", "slack", "http"} {
			id, err := tx.InsertNotification(atoll.Notification{JobID: 42, Dest: i, Kind: kind, Payload: []byte(`{"Success":true}`)})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A rolled-back transaction leaves nothing behind.
	_ = db.Update(ctx, func(tx *store.Tx) error {
		if _, err := tx.InsertNotification(atoll.Notification{JobID: 42, Dest: 9, Kind: "http", Payload: []byte(`{}`)}); err != nil {
			return err
		}
		return context.Canceled
	})

	got, err := db.ClaimNotifications(ctx, 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != ids[0] || got[1].ID != ids[1] {
		t.Fatalf("claimed %+v, want the first two of %v", got, ids)
	}
	if got[0].Attempts != 1 || got[0].Kind != "http" || got[1].Kind != "slack" || got[1].Dest != 1 || string(got[0].Payload) != `{"Success":true}` {
		t.Errorf("claimed %+v", got)
	}
	// Claimed rows are leased: the next claim gets only the third.
	again, err := db.ClaimNotifications(ctx, 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || again[0].ID != ids[2] {
		t.Fatalf("second claim = %+v, want only %d", again, ids[2])
	}

	if err := db.NotificationSent(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := db.NotificationRetry(ctx, ids[1], now.Add(30*time.Second), "status 500"); err != nil {
		t.Fatal(err)
	}
	if err := db.NotificationFailed(ctx, ids[2], "gave up"); err != nil {
		t.Fatal(err)
	}
	// Nothing is due before the retry time; the lease of a node that died
	// mid-send ends too.
	if n, err := db.ClaimNotifications(ctx, 10, time.Minute); err != nil || len(n) != 0 {
		t.Fatalf("claim before retry time = %+v, %v; want none", n, err)
	}
	now = now.Add(31 * time.Second)
	retried, err := db.ClaimNotifications(ctx, 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(retried) != 1 || retried[0].ID != ids[1] || retried[0].Attempts != 2 || retried[0].LastError != "status 500" {
		t.Fatalf("claim after retry time = %+v, want %d on attempt 2", retried, ids[1])
	}
	now = now.Add(2 * time.Minute) // the lease ends without an outcome
	leased, err := db.ClaimNotifications(ctx, 10, time.Minute)
	if err != nil || len(leased) != 1 || leased[0].ID != ids[1] || leased[0].Attempts != 3 {
		t.Fatalf("claim after the lease = %+v, %v; want %d on attempt 3", leased, err, ids[1])
	}

	states, err := db.Notifications(ctx, 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 3 {
		t.Fatalf("job 42 has %d notifications, want 3 (the rolled-back one is not kept)", len(states))
	}
	if !states[0].Sent || states[0].Failed || states[1].Sent || states[1].Failed || !states[2].Failed || states[2].LastError != "gave up" {
		t.Errorf("states = %+v", states)
	}
}

// Retention deletes sent and given-up notifications queued before the
// webhooks window; a pending one stays however old it is.
func TestPruneNotifications(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	db.Now = func() time.Time { return now }
	ids := make([]int64, 4)
	if err := db.Update(ctx, func(tx *store.Tx) error {
		ids = ids[:0]
		for i := range 3 {
			id, err := tx.InsertNotification(atoll.Notification{JobID: 7, Dest: i, Kind: "http", Payload: []byte(`{}`)})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// 0 sent, 1 given up, 2 pending: all queued 40 days ago. 3 sent today.
	if err := db.NotificationSent(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := db.NotificationFailed(ctx, ids[1], "gave up"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(40 * 24 * time.Hour)
	if err := db.Update(ctx, func(tx *store.Tx) error {
		id, err := tx.InsertNotification(atoll.Notification{JobID: 8, Dest: 0, Kind: "http", Payload: []byte(`{}`)})
		ids = append(ids, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.NotificationSent(ctx, ids[3]); err != nil {
		t.Fatal(err)
	}
	res, err := db.Prune(ctx, store.Retention{Notifications: 30 * 24 * time.Hour, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Notifications != 2 {
		t.Fatalf("pruned %d notifications; want the old sent and given-up ones", res.Notifications)
	}
	left, err := db.Notifications(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ID != ids[2] {
		t.Fatalf("job 7's notifications left: %+v; want only the pending one, %d", left, ids[2])
	}
	if recent, err := db.Notifications(ctx, 8); err != nil || len(recent) != 1 {
		t.Fatalf("today's sent notification: %+v, %v; want it kept", recent, err)
	}
}

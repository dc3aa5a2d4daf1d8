package replica_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/replica"
	"github.com/atollhq/atoll/replica/s3test"
)

const leaseTTL = 15 * time.Second

// leaseT0 is the fake clocks' start; the leases' expiry uses it, not real time.
var leaseT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// leaseClock is a settable clock shared by the nodes of a test.
type leaseClock struct {
	mu  sync.Mutex
	now time.Time
}

func newLeaseClock() *leaseClock { return &leaseClock{now: leaseT0} }

func (c *leaseClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *leaseClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *leaseClock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }

// leaseStore is a replica location; node returns a new Leaser on it (one per
// simulated node) reading the given clock.
type leaseStore struct {
	url  string
	node func(t *testing.T, now func() time.Time) replica.Leaser
}

// leaseStores lists the two implementations, each on a fresh replica: a
// directory (file://) and a bucket of a real in-process S3 server (s3://).
func leaseStores() []struct {
	name string
	new  func(t *testing.T) leaseStore
} {
	node := func(url string) func(t *testing.T, now func() time.Time) replica.Leaser {
		return func(t *testing.T, now func() time.Time) replica.Leaser {
			t.Helper()
			l, err := replica.NewLeaserFromURL(url)
			if err != nil {
				t.Fatalf("NewLeaserFromURL(%s): %v", url, err)
			}
			switch l := l.(type) {
			case *replica.FileLeaser:
				l.Now = now
			case *replica.S3Leaser:
				l.Now = now
			default:
				t.Fatalf("NewLeaserFromURL(%s) = %T", url, l)
			}
			return l
		}
	}
	return []struct {
		name string
		new  func(t *testing.T) leaseStore
	}{
		{"file", func(t *testing.T) leaseStore {
			url := "file://" + filepath.Join(t.TempDir(), "replica")
			return leaseStore{url: url, node: node(url)}
		}},
		{"s3", func(t *testing.T) leaseStore {
			t.Setenv("AWS_CA_BUNDLE", "")
			url := s3test.New(t).URL("atoll/db")
			return leaseStore{url: url, node: node(url)}
		}},
	}
}

// forEachLeaseStore runs fn once per implementation.
func forEachLeaseStore(t *testing.T, fn func(t *testing.T, s leaseStore)) {
	for _, st := range leaseStores() {
		t.Run(st.name, func(t *testing.T) { fn(t, st.new(t)) })
	}
}

func mustAcquire(t *testing.T, l replica.Leaser, owner string) *replica.Lease {
	t.Helper()
	lease, err := l.Acquire(context.Background(), owner, "http://"+owner+":4141", leaseTTL)
	if err != nil {
		t.Fatalf("%s: Acquire: %v", owner, err)
	}
	return lease
}

func wantHeldBy(t *testing.T, err error, owner string) {
	t.Helper()
	var held *replica.LeaseHeldError
	if !errors.Is(err, replica.ErrLeaseHeld) || !errors.As(err, &held) {
		t.Fatalf("err = %v, want ErrLeaseHeld", err)
	}
	if held.Holder.Owner != owner || held.Holder.AdvertiseURL != "http://"+owner+":4141" {
		t.Fatalf("holder %+v, want %s", held.Holder, owner)
	}
	if !strings.Contains(err.Error(), owner) {
		t.Fatalf("message %q does not name the holder %s", err, owner)
	}
}

func wantCurrent(t *testing.T, l replica.Leaser, owner string, generation int64) {
	t.Helper()
	cur, err := l.Current(context.Background())
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	if owner == "" {
		if cur != nil {
			t.Fatalf("Current = %+v, want none", cur)
		}
		return
	}
	if cur == nil || cur.Owner != owner || cur.Generation != generation || cur.AdvertiseURL != "http://"+owner+":4141" {
		t.Fatalf("Current = %+v, want %s generation %d", cur, owner, generation)
	}
}

func TestLeaseAcquireWhenFree(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		wantCurrent(t, b, "", 0)

		l := mustAcquire(t, a, "node-a")
		if l.Generation != 1 || l.Owner != "node-a" || l.AdvertiseURL != "http://node-a:4141" || !l.ExpiresAt.Equal(leaseT0.Add(leaseTTL)) {
			t.Fatalf("lease %+v", l)
		}
		wantCurrent(t, b, "node-a", 1)
	})
}

func TestLeaseHeldByAnotherOwner(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		mustAcquire(t, a, "node-a")
		clock.Add(leaseTTL / 2)

		_, err := b.Acquire(context.Background(), "node-b", "http://node-b:4141", leaseTTL)
		wantHeldBy(t, err, "node-a")
		wantCurrent(t, a, "node-a", 1)
	})
}

func TestLeaseTakeoverAfterExpiry(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		mustAcquire(t, a, "node-a")
		clock.Add(leaseTTL + time.Second)
		wantCurrent(t, b, "", 0)

		l := mustAcquire(t, b, "node-b")
		if l.Generation != 2 {
			t.Fatalf("takeover generation %d, want 2", l.Generation)
		}
		wantCurrent(t, a, "node-b", 2)
	})
}

func TestLeaseRenewExtends(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		ctx := context.Background()
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		l := mustAcquire(t, a, "node-a")

		clock.Add(10 * time.Second)
		l2, err := a.Renew(ctx, l, leaseTTL)
		if err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if l2.Generation != 1 || !l2.ExpiresAt.Equal(leaseT0.Add(10*time.Second+leaseTTL)) {
			t.Fatalf("renewed lease %+v", l2)
		}

		// Past the first term, within the renewed one: still held.
		clock.Set(l.ExpiresAt.Add(time.Second))
		_, err = b.Acquire(ctx, "node-b", "http://node-b:4141", leaseTTL)
		wantHeldBy(t, err, "node-a")
		if _, err := a.Renew(ctx, l2, leaseTTL); err != nil {
			t.Fatalf("second Renew: %v", err)
		}
	})
}

func TestLeaseRenewAfterTakeover(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		ctx := context.Background()
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		la := mustAcquire(t, a, "node-a")
		clock.Add(leaseTTL + time.Second)
		lb := mustAcquire(t, b, "node-b")
		if _, err := b.Renew(ctx, lb, leaseTTL); err != nil {
			t.Fatalf("b Renew: %v", err)
		}

		// a resumes with its stale ETag/version.
		_, err := a.Renew(ctx, la, leaseTTL)
		if !errors.Is(err, replica.ErrLeaseLost) {
			t.Fatalf("stale Renew: err = %v, want ErrLeaseLost", err)
		}
		if !strings.Contains(err.Error(), "node-b") {
			t.Errorf("message %q does not name the new holder", err)
		}
		// Nor may its release clobber b's lease.
		if err := a.Release(ctx, la); !errors.Is(err, replica.ErrLeaseLost) {
			t.Fatalf("stale Release: err = %v, want ErrLeaseLost", err)
		}
		wantCurrent(t, a, "node-b", 2)
	})
}

func TestLeaseConcurrentAcquire(t *testing.T) {
	for _, expired := range []bool{false, true} {
		t.Run(fmt.Sprintf("expired=%v", expired), func(t *testing.T) {
			forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
				clock := newLeaseClock()
				want := int64(1)
				if expired {
					mustAcquire(t, s.node(t, clock.Now), "node-old")
					clock.Add(leaseTTL + time.Second)
					want = 2
				}

				const n = 8
				nodes := make([]replica.Leaser, n)
				for i := range nodes {
					nodes[i] = s.node(t, clock.Now)
				}
				var (
					wg     sync.WaitGroup
					start  = make(chan struct{})
					leases = make([]*replica.Lease, n)
					errs   = make([]error, n)
				)
				for i := range nodes {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						leases[i], errs[i] = nodes[i].Acquire(context.Background(), fmt.Sprintf("node-%d", i), "", leaseTTL)
					}()
				}
				close(start)
				wg.Wait()

				winner := -1
				for i := range nodes {
					switch {
					case errs[i] == nil && winner >= 0:
						t.Fatalf("node-%d and node-%d both acquired", winner, i)
					case errs[i] == nil:
						winner = i
					case !errors.Is(errs[i], replica.ErrLeaseHeld):
						t.Fatalf("node-%d: err = %v, want ErrLeaseHeld", i, errs[i])
					}
				}
				if winner < 0 {
					t.Fatal("nobody acquired the lease")
				}
				if leases[winner].Generation != want {
					t.Fatalf("winner generation %d, want %d", leases[winner].Generation, want)
				}
				cur, err := nodes[0].Current(context.Background())
				if err != nil || cur == nil || cur.Owner != fmt.Sprintf("node-%d", winner) || cur.Generation != want {
					t.Fatalf("Current = %+v, %v; want node-%d generation %d", cur, err, winner, want)
				}
			})
		})
	}
}

func TestLeaseReleaseKeepsGeneration(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		ctx := context.Background()
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		la := mustAcquire(t, a, "node-a")
		la, err := a.Renew(ctx, la, leaseTTL)
		if err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if err := a.Release(ctx, la); err != nil {
			t.Fatalf("Release: %v", err)
		}
		wantCurrent(t, b, "", 0)

		// No waiting for the TTL; the next term is generation 2.
		lb := mustAcquire(t, b, "node-b")
		if lb.Generation != 2 {
			t.Fatalf("generation after release %d, want 2", lb.Generation)
		}
		if _, err := a.Renew(ctx, la, leaseTTL); !errors.Is(err, replica.ErrLeaseLost) {
			t.Fatalf("Renew after release: err = %v, want ErrLeaseLost", err)
		}
		wantCurrent(t, a, "node-b", 2)
	})
}

func TestLeaseClockNearDeadline(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		ctx := context.Background()
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		la := mustAcquire(t, a, "node-a")

		clock.Set(la.ExpiresAt.Add(-time.Millisecond))
		wantCurrent(t, b, "node-a", 1)
		_, err := b.Acquire(ctx, "node-b", "http://node-b:4141", leaseTTL)
		wantHeldBy(t, err, "node-a")

		clock.Set(la.ExpiresAt) // expiry is exclusive
		wantCurrent(t, b, "", 0)

		clock.Set(la.ExpiresAt.Add(time.Millisecond))
		lb := mustAcquire(t, b, "node-b")
		if lb.Generation != 2 {
			t.Fatalf("generation %d, want 2", lb.Generation)
		}
	})
}

func TestLeaseCurrent(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		clock := newLeaseClock()
		a, standby := s.node(t, clock.Now), s.node(t, clock.Now)
		wantCurrent(t, standby, "", 0)
		la := mustAcquire(t, a, "node-a")

		cur, err := standby.Current(context.Background())
		if err != nil {
			t.Fatalf("Current: %v", err)
		}
		if cur.AdvertiseURL != "http://node-a:4141" || !cur.ExpiresAt.Equal(la.ExpiresAt) {
			t.Fatalf("Current = %+v, want %+v", cur, la)
		}
		clock.Add(leaseTTL)
		wantCurrent(t, standby, "", 0)
	})
}

// A renewal whose response was lost may have landed: renewing again from the
// older lease must not depose the node that still holds the term.
func TestLeaseRenewAfterLostResponse(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		ctx := context.Background()
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		l1 := mustAcquire(t, a, "node-a")
		clock.Add(5 * time.Second)
		if _, err := a.Renew(ctx, l1, leaseTTL); err != nil { // response "lost": l1 kept
			t.Fatalf("Renew: %v", err)
		}
		clock.Add(5 * time.Second)
		l3, err := a.Renew(ctx, l1, leaseTTL)
		if err != nil {
			t.Fatalf("Renew from the older lease: %v", err)
		}
		if l3.Generation != 1 || !l3.ExpiresAt.Equal(leaseT0.Add(10*time.Second+leaseTTL)) {
			t.Fatalf("lease %+v", l3)
		}
		if _, err := a.Renew(ctx, l3, leaseTTL); err != nil {
			t.Fatalf("Renew: %v", err)
		}
		_, err = b.Acquire(ctx, "node-b", "http://node-b:4141", leaseTTL)
		wantHeldBy(t, err, "node-a")
	})
}

// A restarted node may take its own unexpired lease back at once, but as a
// new term: its previous incarnation is fenced by the generation.
func TestLeaseSameOwnerReacquires(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		clock := newLeaseClock()
		old := mustAcquire(t, s.node(t, clock.Now), "node-a")
		restarted := s.node(t, clock.Now)
		l := mustAcquire(t, restarted, "node-a")
		if l.Generation != 2 {
			t.Fatalf("generation %d, want 2", l.Generation)
		}
		if _, err := restarted.Renew(context.Background(), old, leaseTTL); !errors.Is(err, replica.ErrLeaseLost) {
			t.Fatalf("old incarnation's Renew: err = %v, want ErrLeaseLost", err)
		}
	})
}

func TestLeaseDeadline(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		clock := newLeaseClock()
		a := s.node(t, clock.Now)
		l := mustAcquire(t, a, "node-a")
		if got, want := l.Deadline(3*time.Second), leaseT0.Add(leaseTTL-3*time.Second); !got.Equal(want) {
			t.Fatalf("Deadline = %s, want %s", got, want)
		}
		clock.Add(4 * time.Second)
		l, err := a.Renew(context.Background(), l, leaseTTL)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := l.Deadline(3*time.Second), leaseT0.Add(4*time.Second+leaseTTL-3*time.Second); !got.Equal(want) {
			t.Fatalf("Deadline after renewal = %s, want %s", got, want)
		}
		cur, err := a.Current(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := cur.Deadline(time.Second), cur.ExpiresAt.Add(-time.Second); !got.Equal(want) {
			t.Fatalf("Deadline of Current = %s, want %s", got, want)
		}
		if !(*replica.Lease)(nil).Deadline(0).IsZero() {
			t.Fatal("nil lease has a deadline")
		}
	})
}

func TestLeaseArguments(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		ctx := context.Background()
		l := s.node(t, nil)
		if _, err := l.Acquire(ctx, "", "", leaseTTL); err == nil {
			t.Error("Acquire without owner succeeded")
		}
		if _, err := l.Acquire(ctx, "node-a", "", 0); err == nil {
			t.Error("Acquire with zero ttl succeeded")
		}
		if _, err := l.Renew(ctx, &replica.Lease{Owner: "node-a", Generation: 1}, leaseTTL); err == nil {
			t.Error("Renew of a lease not from Acquire succeeded")
		}
		if err := l.Release(ctx, nil); err == nil {
			t.Error("Release(nil) succeeded")
		}
	})
}

func TestNewLeaser(t *testing.T) {
	dir := t.TempDir()
	client, err := replica.ParseURL("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	// A fenced client leases the replica it wraps.
	l, err := replica.NewLeaser(replica.NewFencedClient(client, time.Now))
	if err != nil {
		t.Fatal(err)
	}
	if fl, ok := l.(*replica.FileLeaser); !ok || fl.Dir != dir {
		t.Fatalf("NewLeaser(file) = %#v", l)
	}

	gs, err := replica.ParseURL("gs://bucket/db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replica.NewLeaser(gs); atoll.ErrorCode(err) != atoll.ENOTIMPLEMENTED {
		t.Fatalf("NewLeaser(gs) err = %v, want %s", err, atoll.ENOTIMPLEMENTED)
	}
}

// The file lease is a JSON document in <dir>/lock.json.
func TestFileLeaseLockFile(t *testing.T) {
	dir := t.TempDir()
	a := replica.NewFileLeaser(dir)
	mustAcquire(t, a, "node-a")

	data, err := os.ReadFile(filepath.Join(dir, "lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Generation   int64     `json:"generation"`
		Owner        string    `json:"owner"`
		AdvertiseURL string    `json:"advertise_url"`
		ExpiresAt    time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("lock.json: %v: %s", err, data)
	}
	if doc.Generation != 1 || doc.Owner != "node-a" || doc.AdvertiseURL != "http://node-a:4141" || doc.ExpiresAt.IsZero() {
		t.Fatalf("lock.json = %s", data)
	}

	// A damaged lease is an error, never silently replaced.
	if err := os.WriteFile(filepath.Join(dir, "lock.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := replica.NewFileLeaser(dir).Acquire(context.Background(), "node-b", "", leaseTTL); err == nil {
		t.Fatal("Acquire over a damaged lock.json succeeded")
	}
}

// Only the writer of a term can renew or release it: a lease read with
// Current (or from a LeaseHeldError) cannot.
func TestLeaseFromCurrentCannotRenew(t *testing.T) {
	forEachLeaseStore(t, func(t *testing.T, s leaseStore) {
		ctx := context.Background()
		clock := newLeaseClock()
		a, b := s.node(t, clock.Now), s.node(t, clock.Now)
		mustAcquire(t, a, "node-a")
		cur, err := b.Current(ctx)
		if err != nil || cur == nil {
			t.Fatalf("Current = %v, %v", cur, err)
		}
		if _, err := b.Renew(ctx, cur, leaseTTL); err == nil {
			t.Error("Renew of a lease from Current succeeded")
		}
		if err := b.Release(ctx, cur); err == nil {
			t.Error("Release of a lease from Current succeeded")
		}
		_, err = b.Acquire(ctx, "node-b", "", leaseTTL)
		var held *replica.LeaseHeldError
		if !errors.As(err, &held) {
			t.Fatalf("Acquire: err = %v, want *LeaseHeldError", err)
		}
		if err := b.Release(ctx, &held.Holder); err == nil {
			t.Error("Release of the holder from LeaseHeldError succeeded")
		}
		wantCurrent(t, a, "node-a", 1)
	})
}

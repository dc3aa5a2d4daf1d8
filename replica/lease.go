package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/benbjohnson/litestream/file"
	lss3 "github.com/benbjohnson/litestream/s3"

	"github.com/atollhq/atoll"
)

// LeaseFile is the name of the lease object next to the replica's LTX files,
// the same key Litestream's own s3.Leaser uses.
const LeaseFile = "lock.json"

var (
	// ErrLeaseHeld is returned (inside a *LeaseHeldError) by Acquire when
	// another owner holds an unexpired lease.
	ErrLeaseHeld = errors.New("lease held by another node")
	// ErrLeaseLost is returned by Renew and Release when the lease was
	// released or taken over since the caller last wrote it.
	ErrLeaseLost = errors.New("lease lost")
)

// Lease is a term of leadership over a replica. Generation is the epoch: it
// increases with every acquisition and serves as the fencing token.
type Lease struct {
	Generation   int64
	Owner        string
	AdvertiseURL string
	ExpiresAt    time.Time

	version   string        // ETag (S3) or version counter (file) of the stored lease
	writtenAt time.Time     // holder's clock reading taken before the write (keeps the monotonic reading)
	ttl       time.Duration // ttl of that write
}

// Deadline returns the instant until which the holder may write to the
// replica: the local time taken just before the lease was last written plus
// its TTL, minus margin for clock skew between nodes and in-flight uploads.
// For a lease the caller did not write (from Current) it is ExpiresAt-margin.
func (l *Lease) Deadline(margin time.Duration) time.Time {
	if l == nil {
		return time.Time{}
	}
	if l.writtenAt.IsZero() {
		return l.ExpiresAt.Add(-margin)
	}
	return l.writtenAt.Add(l.ttl - margin)
}

// LeaseHeldError reports who holds the lease that Acquire could not take.
type LeaseHeldError struct {
	Holder Lease
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("%s: owner %q (advertise %q), generation %d, until %s",
		ErrLeaseHeld, e.Holder.Owner, e.Holder.AdvertiseURL, e.Holder.Generation, e.Holder.ExpiresAt.Format(time.RFC3339Nano))
}

func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// Leaser elects one owner of a replica at a time.
type Leaser interface {
	// Acquire takes the lease for ttl if it is free, expired, released or
	// already held by owner; the new term has the next Generation. Otherwise
	// it returns a *LeaseHeldError (errors.Is ErrLeaseHeld).
	Acquire(ctx context.Context, owner, advertiseURL string, ttl time.Duration) (*Lease, error)
	// Renew extends l by ttl from now, keeping its Generation. It returns
	// ErrLeaseLost if the lease was released or taken since l was written.
	Renew(ctx context.Context, l *Lease, ttl time.Duration) (*Lease, error)
	// Release makes the lease immediately acquirable by others; the stored
	// Generation is kept so that the next Acquire increments it. Best effort:
	// ErrLeaseLost if l was no longer held.
	Release(ctx context.Context, l *Lease) error
	// Current returns the unexpired holder, or nil, nil when there is none;
	// the result cannot be renewed or released.
	Current(ctx context.Context) (*Lease, error)
}

// NewLeaser returns the Leaser for a replica client: a lock.json next to the
// LTX files, for the file and s3 clients (a *FencedClient is looked through).
func NewLeaser(client litestream.ReplicaClient) (Leaser, error) {
	if fc, ok := client.(*FencedClient); ok {
		client = fc.Client
	}
	switch c := client.(type) {
	case *file.ReplicaClient:
		return NewFileLeaser(c.Path()), nil
	case *lss3.ReplicaClient:
		return NewS3Leaser(c), nil
	case nil:
		return nil, atoll.Errorf(atoll.EINVALID, "No replica client to lease.")
	default:
		return nil, atoll.Errorf(atoll.ENOTIMPLEMENTED, "Replica type %q has no lease: use an s3:// or file:// replica URL for high availability.", client.Type())
	}
}

// NewLeaserFromURL parses a replica URL and returns its Leaser.
func NewLeaserFromURL(raw string) (Leaser, error) {
	client, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	return NewLeaser(client)
}

// record is the stored lease. Field names match Litestream's Lease JSON
// (generation, expires_at, owner) so its tools can read it.
type record struct {
	Generation   int64     `json:"generation"`
	ExpiresAt    time.Time `json:"expires_at"`
	Owner        string    `json:"owner,omitempty"`
	AdvertiseURL string    `json:"advertise_url,omitempty"`
	// Nonce makes every write distinct (S3 ETags are content hashes) and
	// lets a writer recognise its own write after a lost response.
	Nonce string `json:"nonce"`
}

// held reports whether r is an unexpired, unreleased lease at now.
func (r *record) held(now time.Time) bool {
	return r != nil && r.Owner != "" && now.Before(r.ExpiresAt)
}

// lease returns r as a Lease; only the writer gets the version, so that a
// lease from Current or an error cannot renew or release someone else's term.
func (r *record) lease(version string) *Lease {
	return &Lease{Generation: r.Generation, Owner: r.Owner, AdvertiseURL: r.AdvertiseURL, ExpiresAt: r.ExpiresAt, version: version}
}

// errConflict is returned by a casStore write whose expected version is stale.
var errConflict = errors.New("lease version conflict")

// casStore stores one record with compare-and-swap on an opaque version.
type casStore interface {
	// read returns the record and its version, or nil, "" when absent.
	read(ctx context.Context) (*record, string, error)
	// write stores r if the stored version is ifVersion ("" = absent) and
	// returns the new version, or errConflict.
	write(ctx context.Context, r *record, ifVersion string) (string, error)
	// where names the store in errors.
	where() string
}

// leaser implements Leaser's semantics over a casStore.
type leaser struct {
	store casStore
	now   func() time.Time
}

func (l *leaser) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

func (l *leaser) Acquire(ctx context.Context, owner, advertiseURL string, ttl time.Duration) (*Lease, error) {
	if owner == "" {
		return nil, fmt.Errorf("acquire lease %s: owner required", l.store.where())
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("acquire lease %s: ttl must be positive, got %s", l.store.where(), ttl)
	}
	cur, version, err := l.store.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire lease %s: %w", l.store.where(), err)
	}
	now := l.clock()
	// The same owner may re-acquire an unexpired lease (a restarted node need
	// not wait out its old term); the new term still gets a new Generation.
	if cur.held(now) && cur.Owner != owner {
		return nil, &LeaseHeldError{Holder: *cur.lease("")}
	}
	next := &record{Generation: 1, Owner: owner, AdvertiseURL: advertiseURL, ExpiresAt: now.Add(ttl).Round(0).UTC(), Nonce: nonce()}
	if cur != nil {
		next.Generation = cur.Generation + 1
	}
	return l.put(ctx, "acquire", next, version, now, ttl, func(cur *record) error {
		if !cur.held(l.clock()) {
			return fmt.Errorf("acquire lease %s: changed while acquiring, retry: %w", l.store.where(), errConflict)
		}
		return &LeaseHeldError{Holder: *cur.lease("")}
	})
}

func (l *leaser) Renew(ctx context.Context, old *Lease, ttl time.Duration) (*Lease, error) {
	if old == nil || old.version == "" {
		return nil, fmt.Errorf("renew lease %s: no lease from Acquire or Renew", l.store.where())
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("renew lease %s: ttl must be positive, got %s", l.store.where(), ttl)
	}
	now := l.clock()
	next := &record{Generation: old.Generation, Owner: old.Owner, AdvertiseURL: old.AdvertiseURL, ExpiresAt: now.Add(ttl).Round(0).UTC(), Nonce: nonce()}
	lease, err := l.put(ctx, "renew", next, old.version, now, ttl, nil)
	if !errors.Is(err, ErrLeaseLost) {
		return lease, err
	}
	// An earlier renewal whose response was lost may have landed: the stored
	// lease is still this term (a takeover or a release would have changed
	// the generation or cleared the owner), so renew over it.
	cur, version, rerr := l.store.read(ctx)
	if rerr != nil || cur == nil || cur.Owner != old.Owner || cur.Generation != old.Generation {
		return nil, err
	}
	return l.put(ctx, "renew", next, version, now, ttl, nil)
}

func (l *leaser) Release(ctx context.Context, old *Lease) error {
	if old == nil || old.version == "" {
		return fmt.Errorf("release lease %s: no lease from Acquire or Renew", l.store.where())
	}
	// An expired record with no owner, written with the holder's version
	// rather than deleted: conditional DELETE is not portable, and the
	// generation must survive for the next Acquire.
	now := l.clock()
	next := &record{Generation: old.Generation, ExpiresAt: now.Round(0).UTC(), Nonce: nonce()}
	_, err := l.put(ctx, "release", next, old.version, now, 0, nil)
	return err
}

func (l *leaser) Current(ctx context.Context) (*Lease, error) {
	cur, _, err := l.store.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("read lease %s: %w", l.store.where(), err)
	}
	if !cur.held(l.clock()) {
		return nil, nil
	}
	return cur.lease(""), nil
}

// put writes next over ifVersion. On a conflict it re-reads: its own write
// (same nonce, e.g. an SDK retry after a lost response) counts as success;
// otherwise conflict builds the error (nil: ErrLeaseLost naming the holder).
func (l *leaser) put(ctx context.Context, op string, next *record, ifVersion string, now time.Time, ttl time.Duration,
	conflict func(cur *record) error,
) (*Lease, error) {
	version, err := l.store.write(ctx, next, ifVersion)
	if errors.Is(err, errConflict) {
		cur, curVersion, rerr := l.store.read(ctx)
		switch {
		case rerr != nil:
			return nil, fmt.Errorf("%s lease %s: %w (then: %w)", op, l.store.where(), err, rerr)
		case cur != nil && cur.Nonce == next.Nonce:
			version, err = curVersion, nil
		case conflict != nil:
			return nil, conflict(cur)
		case cur.held(l.clock()):
			return nil, fmt.Errorf("%s lease %s: %w to %q (advertise %q), generation %d", op, l.store.where(), ErrLeaseLost, cur.Owner, cur.AdvertiseURL, cur.Generation)
		default:
			return nil, fmt.Errorf("%s lease %s: %w (released or taken over)", op, l.store.where(), ErrLeaseLost)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s lease %s: %w", op, l.store.where(), err)
	}
	lease := next.lease(version)
	lease.writtenAt, lease.ttl = now, ttl
	return lease, nil
}

func nonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

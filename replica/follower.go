package replica

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/atollhq/atoll"
)

// DefaultFollowInterval is how often a Follower polls the replica for new
// LTX files (one LIST of L0 per poll).
const DefaultFollowInterval = 100 * time.Millisecond

// Follower keeps a local copy of the replica up to date on the standby: a
// full restore first, then every new LTX file applied as it appears, like
// Litestream's restore in follow mode, except that the pages are written
// through SQLite (see apply.go) so that the standby can read the copy while
// it is being applied. The copy is a WAL-mode database: readers open it
// read-only (mode=ro or query_only) and always see a whole LTX file or none
// of it. Its position is in the <db>-txid file, as with Litestream.
type Follower struct {
	client   litestream.ReplicaClient
	path     string
	interval time.Duration

	// Logger receives the follower's messages. Set it before Start.
	Logger *slog.Logger
	// Moved, if set (before Start), is called after the copy moved on: once
	// restored, and after each poll that applied LTX files. The standby's
	// live pages re-read then. It must not block.
	Moved func()

	mu         sync.Mutex
	cancel     context.CancelFunc
	done       chan struct{}
	caughtUpAt time.Time // when a poll last found nothing newer
}

// NewFollower returns a Follower that restores client into dbPath and polls
// every interval (DefaultFollowInterval if zero).
func NewFollower(client litestream.ReplicaClient, dbPath string, interval time.Duration) *Follower {
	if interval <= 0 {
		interval = DefaultFollowInterval
	}
	return &Follower{client: client, path: dbPath, interval: interval, Logger: slog.Default()}
}

// Start wipes whatever is at dbPath (the replica is the truth; a standby's
// database is small, so it is restored in full rather than trusted) and
// starts restoring and following in the background, until Stop or ctx
// ends. Use CatchUp to wait for the copy, and open readers after it: the
// first restore creates the file.
func (f *Follower) Start(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel != nil {
		return fmt.Errorf("follow %s: already started", f.path)
	}
	if err := Wipe(f.path); err != nil {
		return fmt.Errorf("follow %s: %w", f.path, err)
	}
	if err := f.client.Init(ctx); err != nil {
		return fmt.Errorf("follow %s: %w", f.path, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	f.cancel, f.done = cancel, make(chan struct{})
	f.caughtUpAt = time.Now()
	go f.run(ctx, f.done)
	return nil
}

// run restores the copy, then polls until ctx ends. A failed poll is tried
// again at the next tick; a copy that cannot be opened is restored again.
func (f *Follower) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	logger := f.Logger.With("follow", f.path)
	for ctx.Err() == nil {
		ap, err := f.restore(ctx, logger)
		if err != nil {
			logger.Error("follow: open the restored copy; restoring again", "error", err)
			if err := Wipe(f.path); err != nil {
				logger.Error("follow: wipe", "error", err)
			}
			f.sleep(ctx, 5*f.interval)
			continue
		}
		if ap == nil {
			return // ctx ended
		}
		logger.Debug("follow: restored", "txid", ap.txid)
		f.moved()
		f.follow(ctx, ap, logger)
		ap.close()
	}
}

// restore restores the replica into the (wiped) path, waiting for the
// active node to replicate something if need be, and opens the copy. It
// returns nil, nil when ctx ends.
func (f *Follower) restore(ctx context.Context, logger *slog.Logger) (*applier, error) {
	for {
		err := Restore(ctx, f.client, f.path, false)
		if err == nil {
			return openApplier(f.path, f.client)
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		if atoll.ErrorCode(err) != atoll.ENOTFOUND { // ENOTFOUND: nothing replicated yet
			logger.Error("follow: restore failed; retrying", "error", err)
		}
		f.sleep(ctx, f.interval)
	}
}

// follow applies new LTX files every interval until ctx ends.
func (f *Follower) follow(ctx context.Context, ap *applier, logger *slog.Logger) {
	tick := time.NewTicker(f.interval)
	defer tick.Stop()
	var failing bool
	for {
		polled, before := time.Now(), ap.txid
		current, err := ap.poll(ctx)
		if ap.txid != before {
			f.moved()
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if !failing { // once per outage, not once per poll
				logger.Error("follow: applying the replica failed; retrying", "txid", ap.txid, "error", err)
			}
			failing = true
		default:
			if failing {
				logger.Info("follow: applying again", "txid", ap.txid)
			}
			failing = false
			if current {
				f.mu.Lock()
				f.caughtUpAt = polled
				f.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (f *Follower) moved() {
	if f.Moved != nil {
		f.Moved()
	}
}

func (f *Follower) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Stop stops following and waits (within ctx) for the LTX file being
// applied, if any: the copy is then left whole, at its last position.
func (f *Follower) Stop(ctx context.Context) error {
	f.mu.Lock()
	cancel, done := f.cancel, f.done
	f.cancel = nil
	f.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("follow %s: stop: %w", f.path, ctx.Err())
	}
}

// TXID is the position of the local copy: the last LTX file applied to it
// (0 before the first restore).
func (f *Follower) TXID() (TXID, error) {
	txid, err := litestream.ReadTXIDFile(f.path)
	if err != nil {
		return 0, fmt.Errorf("follow %s: %w", f.path, err)
	}
	return txid, nil
}

// Lag compares the local copy with the replica.
type Lag struct {
	Local, Remote TXID
	// Behind is zero when the copy is at the replica's newest TXID, else
	// the time since the follower last found nothing newer to apply (since
	// Start if never).
	Behind time.Duration
}

// Lag reads the replica's newest TXID (one listing of each level) and
// compares the local copy with it.
func (f *Follower) Lag(ctx context.Context) (Lag, error) {
	remote, err := MaxTXID(ctx, f.client)
	if err != nil {
		return Lag{}, fmt.Errorf("follow %s: lag: %w", f.path, err)
	}
	local, err := f.TXID()
	if err != nil {
		return Lag{}, err
	}
	lag := Lag{Local: local, Remote: remote}
	if local < remote || local == 0 {
		f.mu.Lock()
		lag.Behind = time.Since(f.caughtUpAt)
		f.mu.Unlock()
	}
	return lag, nil
}

// CatchUp waits until the local copy has reached the replica's newest TXID
// as of the call, or ctx ends. It fails at once if the replica is behind
// the copy (a replica reset under a running standby: restart the Follower).
func (f *Follower) CatchUp(ctx context.Context) error {
	target, err := MaxTXID(ctx, f.client)
	if err != nil {
		return fmt.Errorf("follow %s: catch up: %w", f.path, err)
	}
	tick := time.NewTicker(max(f.interval/4, 5*time.Millisecond))
	defer tick.Stop()
	for {
		local, err := f.TXID()
		if err != nil {
			return err
		}
		switch {
		case target > 0 && local == target:
			return nil
		case local > target:
			return fmt.Errorf("follow %s: the replica (at %s) is behind the local copy (at %s)", f.path, target, local)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("follow %s: catch up to %s (at %s): %w", f.path, target, local, ctx.Err())
		case <-tick.C:
		}
	}
}

// ReadOnlyDSN is the modernc.org/sqlite DSN the standby reads the copy at
// path with: read-only, never changing its journal mode (the copy is in WAL
// mode, which gives readers a consistent snapshot while LTX files are
// applied).
func ReadOnlyDSN(path string) string {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	return "file:" + path + "?" + q.Encode()
}

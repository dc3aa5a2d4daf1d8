package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"
)

// DefaultFollowInterval is how often a Follower polls the replica for new
// LTX files (one LIST of L0 per poll).
const DefaultFollowInterval = 100 * time.Millisecond

// Follower keeps a local copy of the replica up to date on the standby
// (Litestream's restore in follow mode): a full restore first, then every
// new LTX file applied as it appears. Its position is in the <db>-txid file.
type Follower struct {
	client   litestream.ReplicaClient
	path     string
	interval time.Duration

	// Logger receives Litestream's messages (its per-poll Info messages as
	// Debug). Set it before Start.
	Logger *slog.Logger

	mu         sync.Mutex
	cancel     context.CancelFunc
	done       chan struct{}
	caughtUpAt time.Time
}

// NewFollower returns a Follower that restores client into dbPath and polls
// every interval (DefaultFollowInterval if zero).
func NewFollower(client litestream.ReplicaClient, dbPath string, interval time.Duration) *Follower {
	if interval <= 0 {
		interval = DefaultFollowInterval
	}
	return &Follower{client: client, path: dbPath, interval: interval, Logger: slog.Default()}
}

// Start starts following in the background, until Stop or ctx ends. A copy
// left by an earlier Follower is resumed from its position; any other file
// at dbPath (a database this node used as the active one) is wiped first and
// restored in full: the replica is the truth. Use CatchUp to wait for the
// copy.
func (f *Follower) Start(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel != nil {
		return fmt.Errorf("follow %s: already started", f.path)
	}
	if !f.resumable() {
		if err := Wipe(f.path); err != nil {
			return fmt.Errorf("follow %s: %w", f.path, err)
		}
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

// resumable reports whether dbPath holds a follower copy Litestream can
// resume: its follow position exists, and nothing else has written it (no
// WAL, no Litestream state of its own).
func (f *Follower) resumable() bool {
	if _, err := os.Stat(f.path); err != nil {
		return false
	}
	if _, err := os.Stat(litestream.TXIDPath(f.path)); err != nil {
		return false
	}
	if fi, err := os.Stat(f.path + "-wal"); err == nil && fi.Size() > 0 {
		return false
	}
	if _, err := os.Stat(metaDir(f.path)); err == nil {
		return false
	}
	return true
}

// run restores and follows until ctx ends. Restore returns only on an error
// (follow mode itself retries failed polls): then it starts over, from
// scratch if the copy cannot be resumed.
func (f *Follower) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	r := newReplica(f.path, f.client, f.Logger)
	logger := f.Logger.With("follow", f.path)
	backoff := f.interval
	for ctx.Err() == nil {
		opt := litestream.NewRestoreOptions()
		opt.OutputPath = f.path
		opt.Follow = true
		opt.FollowInterval = f.interval
		err := r.Restore(ctx, opt)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) {
			backoff = f.interval // nothing replicated yet: wait for the active node
		} else {
			logger.Error("follow failed; restoring again", "error", err, "retry_in", backoff)
			if err := Wipe(f.path); err != nil {
				logger.Error("follow: wipe", "error", err)
			}
			backoff = min(2*backoff, 5*time.Second)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
	}
}

// Stop stops following and waits (within ctx) for the last LTX file being
// applied to be finished.
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
	// Behind is how long the copy has been behind: the time since Lag or
	// CatchUp last saw it at the replica's newest TXID (since Start if
	// never). Zero when it is current.
	Behind time.Duration
}

// Lag reads the replica's newest TXID (one listing of the replica) and
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
	f.mu.Lock()
	defer f.mu.Unlock()
	if local >= remote && local > 0 {
		f.caughtUpAt = time.Now()
	} else {
		lag.Behind = time.Since(f.caughtUpAt)
	}
	return lag, nil
}

// CatchUp waits until the local copy has reached the replica's newest TXID
// as of the call, or ctx ends.
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
		if target > 0 && local >= target {
			f.mu.Lock()
			f.caughtUpAt = time.Now()
			f.mu.Unlock()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("follow %s: catch up to %s (at %s): %w", f.path, target, local, ctx.Err())
		case <-tick.C:
		}
	}
}

// demoteInfo logs Litestream's Info messages as Debug: in follow mode it
// logs one per poll that applied something, many per second on a busy
// replica.
type demoteInfo struct{ slog.Handler }

func (h demoteInfo) Enabled(ctx context.Context, l slog.Level) bool {
	if l == slog.LevelInfo {
		l = slog.LevelDebug
	}
	return h.Handler.Enabled(ctx, l)
}

func (h demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo {
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

func (h demoteInfo) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoteInfo{h.Handler.WithAttrs(attrs)}
}

func (h demoteInfo) WithGroup(name string) slog.Handler { return demoteInfo{h.Handler.WithGroup(name)} }

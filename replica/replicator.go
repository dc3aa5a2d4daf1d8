// Package replica is everything Litestream: the active node's Replicator
// (continuous replication and the per-commit durability barrier), the
// standby's Follower (restore with follow), Restore for disaster recovery
// and promotion, and IsCurrent, the check that keeps a stale database from
// being promoted.
package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// TXID is a Litestream transaction ID: the position of an LTX file in the
// replica. It counts Litestream syncs, not SQLite transactions (one sync may
// carry several commits).
type TXID = ltx.TXID

// Compaction levels (Litestream's defaults): L0 holds one LTX file per sync,
// which the standby follows; L1-L3 merge them so that a restore reads a few
// files rather than every sync since the last snapshot. Snapshots (L9) are
// taken daily and kept a day (Store defaults).
func compactionLevels() litestream.CompactionLevels {
	return litestream.CompactionLevels{
		{Level: 0},
		{Level: 1, Interval: 30 * time.Second},
		{Level: 2, Interval: 5 * time.Minute},
		{Level: 3, Interval: time.Hour},
	}
}

// Replicator replicates the active node's database with Litestream.
//
// Plug Sync into store.DB.AfterCommit and set store.DB.NoAutoCheckpoint
// (Litestream checkpoints the WAL itself, after copying it), open it after
// store.DB.Open (Litestream needs the file) and close it after
// store.DB.Close (no write is then left to sync).
type Replicator struct {
	path   string
	client litestream.ReplicaClient
	logger *slog.Logger

	// SyncTimeout bounds one Sync (DefaultSyncTimeout if zero): with the
	// replica unreachable, the S3 client retries for longer than a writer
	// should wait. Set it before Open.
	SyncTimeout time.Duration

	mu       sync.Mutex
	db       *litestream.DB
	store    *litestream.Store
	lastSync time.Time
}

// NewReplicator returns a Replicator of the SQLite file at dbPath to client.
func NewReplicator(dbPath string, client litestream.ReplicaClient, logger *slog.Logger) *Replicator {
	if logger == nil {
		logger = slog.Default()
	}
	return &Replicator{path: dbPath, client: client, logger: logger}
}

// DefaultSyncTimeout bounds a Sync: well under the lease TTL, so that a node
// cut off from the replica tells its writers before its lease ends.
const DefaultSyncTimeout = 5 * time.Second

var errNotOpen = errors.New("replicator is not open")

// Open starts replicating and returns once the replica holds the database
// as it is now (the first sync uploads a snapshot if the replica has none or
// is behind).
func (r *Replicator) Open(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store != nil {
		return fmt.Errorf("replica open %s: already open", r.path)
	}
	if _, err := os.Stat(r.path); err != nil {
		return fmt.Errorf("replica open %s: %w", r.path, err)
	}
	// A file promoted from a follower copy is live from now on: the follow
	// position no longer describes it (IsCurrent reads Litestream's own).
	if err := removeIfExists(litestream.TXIDPath(r.path)); err != nil {
		return fmt.Errorf("replica open %s: %w", r.path, err)
	}

	db := litestream.NewDB(r.path)
	db.Replica = litestream.NewReplicaWithClient(db, r.client)
	st := litestream.NewStore([]*litestream.DB{db}, compactionLevels())
	st.Logger = r.logger
	db.SetLogger(r.logger.With("db", filepath.Base(r.path)))
	if err := st.Open(ctx); err != nil {
		return fmt.Errorf("replica open %s: %w", r.path, err)
	}
	if err := db.SyncAndWait(ctx); err != nil {
		// Closing retries the sync that just failed: briefly.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		st.Close(cctx)
		return fmt.Errorf("replica open %s: first sync: %w", r.path, err)
	}
	r.db, r.store, r.lastSync = db, st, time.Now()
	return nil
}

// Sync is the durability barrier: it returns once every commit made before
// the call is in the replica (Litestream's SyncAndWait: WAL to LTX, then LTX
// to the replica). It is store.DB.AfterCommit on the active node.
func (r *Replicator) Sync(ctx context.Context) error {
	r.mu.Lock()
	db := r.db
	r.mu.Unlock()
	if db == nil {
		return fmt.Errorf("replica sync %s: %w", r.path, errNotOpen)
	}
	timeout := r.SyncTimeout
	if timeout <= 0 {
		timeout = DefaultSyncTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	if err := db.SyncAndWait(ctx); err != nil {
		return fmt.Errorf("replica sync %s: %w", r.path, err)
	}
	// Litestream counts a commit replicated once the replica's TXID reaches
	// it, and after a failed upload it rereads that TXID from the replica:
	// past a takeover, the new active's files. Only a sync that ended
	// before the lease deadline (no other writer yet) proves anything.
	if fc, ok := r.client.(*FencedClient); ok {
		if err := fc.Check("acknowledge commit"); err != nil {
			return fmt.Errorf("replica sync %s: %w", r.path, err)
		}
	}
	r.logger.Debug("replicated", "ms", time.Since(start).Milliseconds())
	r.mu.Lock()
	r.lastSync = time.Now()
	r.mu.Unlock()
	return nil
}

// Status reports the local position (the last LTX file made from the WAL),
// the replica's (the newest LTX file it holds; this lists the replica) and
// when Sync last succeeded.
func (r *Replicator) Status(ctx context.Context) (local, remote TXID, lastSync time.Time, err error) {
	r.mu.Lock()
	db, lastSync := r.db, r.lastSync
	r.mu.Unlock()
	if db == nil {
		return 0, 0, lastSync, fmt.Errorf("replica status %s: %w", r.path, errNotOpen)
	}
	st, err := db.SyncStatus(ctx)
	if err != nil {
		return 0, 0, lastSync, fmt.Errorf("replica status %s: %w", r.path, err)
	}
	return st.LocalTXID, st.RemoteTXID, lastSync, nil
}

// Close makes a last sync and stops replicating. The sync's error is
// returned: writes committed since the last successful Sync may not be in
// the replica. Litestream retries that sync until ctx ends (or 30 s): a
// node that must stop writing to the replica at once (fenced) passes a
// cancelled ctx.
func (r *Replicator) Close(ctx context.Context) error {
	r.mu.Lock()
	db, st := r.db, r.store
	r.db, r.store = nil, nil
	r.mu.Unlock()
	if st == nil {
		return nil
	}
	serr := db.SyncAndWait(ctx)
	if serr != nil {
		serr = fmt.Errorf("replica close %s: last sync: %w", r.path, serr)
	}
	// The store's own final sync runs again here (cheap when nothing is
	// left); its retries are bounded by ctx.
	if err := st.Close(ctx); err != nil && serr == nil {
		serr = fmt.Errorf("replica close %s: %w", r.path, err)
	}
	return serr
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/atollhq/atoll"
)

// Restore writes the replica's latest database to outputPath (`atoll
// restore`, and promotion of a standby whose copy is stale) and records the
// TXID it restored in outputPath-txid, as a follower copy's position (so
// IsCurrent can tell whether the replica has moved on since). An existing
// file is refused unless overwrite is set; with overwrite the old database,
// its WAL, its position and Litestream's local state are replaced only once
// the new copy is complete.
func Restore(ctx context.Context, client litestream.ReplicaClient, outputPath string, overwrite bool) error {
	if _, err := os.Stat(outputPath); err == nil && !overwrite {
		return atoll.Errorf(atoll.ECONFLICT, "%s already exists; restoring would replace it", outputPath)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("replica restore %s: %w", outputPath, err)
	}
	// Restore a fixed TXID (the newest now), so that the position recorded
	// is exactly what was restored.
	txid, err := MaxTXID(ctx, client)
	if err != nil {
		return fmt.Errorf("replica restore %s: %w", outputPath, err)
	} else if txid == 0 {
		return atoll.Errorf(atoll.ENOTFOUND, "The replica holds no database.")
	}
	// Restore beside the target, then move it into place: a failed restore
	// leaves whatever was there.
	tmp := outputPath + ".restoring"
	if err := Wipe(tmp); err != nil {
		return fmt.Errorf("replica restore %s: %w", outputPath, err)
	}
	defer Wipe(tmp)
	opt := litestream.NewRestoreOptions()
	opt.OutputPath = tmp
	opt.TXID = txid
	opt.IntegrityCheck = litestream.IntegrityCheckQuick
	if err := newReplica(tmp, client, slog.Default()).Restore(ctx, opt); err != nil {
		return fmt.Errorf("replica restore %s: %w", outputPath, err)
	}
	if err := Wipe(outputPath); err != nil {
		return fmt.Errorf("replica restore %s: %w", outputPath, err)
	}
	if err := os.Rename(tmp, outputPath); err != nil {
		return fmt.Errorf("replica restore %s: %w", outputPath, err)
	}
	if err := litestream.WriteTXIDFile(outputPath, txid); err != nil {
		return fmt.Errorf("replica restore %s: %w", outputPath, err)
	}
	return nil
}

// newReplica returns a replica of client for restoring into path. Litestream
// logs through the replica's DB: it gets one (never opened) only for that,
// with Litestream's chatty Info messages (one per poll in follow mode) as
// Debug.
func newReplica(path string, client litestream.ReplicaClient, logger *slog.Logger) *litestream.Replica {
	ldb := litestream.NewDB(path)
	ldb.Logger = slog.New(demoteInfo{logger.Handler()}).With("restore", path)
	return litestream.NewReplicaWithClient(ldb, client)
}

// Wipe removes the database at path and everything that describes it: the
// WAL and shared-memory files, the follow position (-txid) and Litestream's
// local state (.<name>-litestream). A stale copy must go entirely: a leftover
// WAL would be applied to the next database at that path, and leftover
// Litestream state would describe another history.
func Wipe(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", litestream.TXIDPath(path)} {
		if err := removeIfExists(p); err != nil {
			return fmt.Errorf("wipe %s: %w", path, err)
		}
	}
	if err := os.RemoveAll(metaDir(path)); err != nil {
		return fmt.Errorf("wipe %s: %w", path, err)
	}
	return nil
}

// metaDir is where Litestream keeps its local state for the database at path.
func metaDir(path string) string {
	dir, file := filepath.Split(path)
	return filepath.Join(dir, "."+file+litestream.MetaDirSuffix)
}

// MaxTXID returns the newest TXID in the replica (0 when it is empty). L0
// always keeps its newest file (Litestream's L0 retention never deletes it),
// so that is where the newest TXID is; the other levels are read as well so
// that a replica written by another tool is not misread.
func MaxTXID(ctx context.Context, client litestream.ReplicaClient) (TXID, error) {
	info, err := maxFile(ctx, client)
	if err != nil {
		return 0, err
	}
	if info == nil {
		return 0, nil
	}
	return info.MaxTXID, nil
}

func maxFile(ctx context.Context, client litestream.ReplicaClient) (*ltx.FileInfo, error) {
	if err := client.Init(ctx); err != nil {
		return nil, fmt.Errorf("replica max txid: %w", err)
	}
	var best *ltx.FileInfo
	for level := 0; level <= litestream.SnapshotLevel; level++ {
		itr, err := client.LTXFiles(ctx, level, 0, false)
		if err != nil {
			return nil, fmt.Errorf("replica max txid: level %d: %w", level, err)
		}
		for itr.Next() {
			// Prefer L0 on a tie: it is the file the active node uploaded.
			if info := itr.Item(); best == nil || info.MaxTXID > best.MaxTXID {
				copied := *info
				best = &copied
			}
		}
		if err := itr.Close(); err != nil {
			return nil, fmt.Errorf("replica max txid: level %d: %w", level, err)
		}
	}
	return best, nil
}

// LocalTXID returns the position of the database at path as this node knows
// it: the follow position of a follower copy (-txid), or else the newest LTX
// file Litestream made from it while it was replicated here (0 if neither).
func LocalTXID(path string) (txid TXID, follower bool, err error) {
	if _, err := os.Stat(litestream.TXIDPath(path)); err == nil {
		txid, err := litestream.ReadTXIDFile(path)
		if err != nil {
			return 0, true, fmt.Errorf("local txid %s: %w", path, err)
		}
		return txid, true, nil
	}
	ents, err := os.ReadDir(filepath.Join(metaDir(path), "ltx", "0"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, fmt.Errorf("local txid %s: %w", path, err)
	}
	for _, ent := range ents {
		if _, max, err := ltx.ParseFilename(ent.Name()); err == nil && max > txid {
			txid = max
		}
	}
	return txid, false, nil
}

// IsCurrent reports whether the database at dbPath may be promoted: it holds
// everything the replica holds. Promoting a stale copy would make the
// replica continue from an older state and silently lose acknowledged
// writes; when this is false, Restore(…, overwrite=true) first.
//
// A follower copy is current when its follow position is the replica's
// newest TXID. A database this node replicated itself is current when it has
// reached the replica's newest TXID and its own LTX file of that TXID is the
// replica's, byte for byte: equal TXIDs alone do not prove the same history
// (another node may have been promoted and written that TXID meanwhile).
// A node that has no database is current only while the replica is empty.
func IsCurrent(ctx context.Context, client litestream.ReplicaClient, dbPath string) (bool, error) {
	remote, err := maxFile(ctx, client)
	if err != nil {
		return false, fmt.Errorf("is current %s: %w", dbPath, err)
	}
	var remoteTXID TXID
	if remote != nil {
		remoteTXID = remote.MaxTXID
	}
	if _, err := os.Stat(dbPath); errors.Is(err, os.ErrNotExist) {
		return remoteTXID == 0, nil
	} else if err != nil {
		return false, fmt.Errorf("is current %s: %w", dbPath, err)
	}
	local, follower, err := LocalTXID(dbPath)
	if err != nil {
		return false, fmt.Errorf("is current %s: %w", dbPath, err)
	}
	switch {
	case remoteTXID == 0:
		// An empty replica (a new one): promoting uploads this database.
		return true, nil
	case follower:
		return local == remoteTXID, nil
	case local < remoteTXID:
		return false, nil
	case remote.Level != 0:
		return false, nil // nothing local to compare it with
	}
	same, err := sameLTX(ctx, client, remote, filepath.Join(metaDir(dbPath), "ltx", "0", ltx.FormatFilename(remote.MinTXID, remote.MaxTXID)))
	if err != nil {
		return false, fmt.Errorf("is current %s: %w", dbPath, err)
	}
	return same, nil
}

// sameLTX reports whether the replica's file info has the same bytes as the
// local file at path (false if there is no such local file).
func sameLTX(ctx context.Context, client litestream.ReplicaClient, info *ltx.FileInfo, path string) (bool, error) {
	lf, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	defer lf.Close()
	rf, err := client.OpenLTXFile(ctx, info.Level, info.MinTXID, info.MaxTXID, 0, 0)
	if err != nil {
		return false, err
	}
	defer rf.Close()
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		n, errA := io.ReadFull(lf, a)
		m, errB := io.ReadFull(rf, b)
		if n != m || !bytes.Equal(a[:n], b[:m]) {
			return false, nil
		}
		endA := errors.Is(errA, io.EOF) || errors.Is(errA, io.ErrUnexpectedEOF)
		endB := errors.Is(errB, io.EOF) || errors.Is(errB, io.ErrUnexpectedEOF)
		switch {
		case endA && endB:
			return true, nil
		case endA != endB:
			return false, nil
		case errA != nil:
			return false, errA
		case errB != nil:
			return false, errB
		}
	}
}

// demoteInfo logs Litestream's Info messages as Debug: they are about its
// own progress ("post-restore integrity check passed" on every restore).
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

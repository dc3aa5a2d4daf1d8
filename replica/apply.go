package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// Why the Follower does not use Litestream's follow mode: Litestream writes
// each LTX file's pages straight into the database file, under an fcntl
// lock that does not exclude readers in the same process (POSIX locks are
// per process), and without telling their page caches: a read-only pool
// open on the copy in the standby's own process kept serving the state it
// first read, and concurrent readers saw rows disappear (a half-applied
// file). Here each LTX file is applied in one SQLite transaction through the
// sqlite_dbpage virtual table (raw page images, plus a truncation to the
// file's commit size), to a WAL-mode copy: readers keep a consistent
// snapshot and see the next one when the transaction commits, whatever
// process they are in.

// applier applies LTX files to the copy at path.
type applier struct {
	path     string
	client   litestream.ReplicaClient
	db       *sql.DB // one connection: the only writer of the copy
	pageSize uint32
	txid     TXID
}

// openApplier opens the copy restored at path (its position in path-txid).
func openApplier(path string, client litestream.ReplicaClient) (*applier, error) {
	txid, err := litestream.ReadTXIDFile(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	} else if txid == 0 {
		return nil, fmt.Errorf("open %s: no follow position", path)
	}
	q := url.Values{}
	// synchronous=FULL: the position file is written after each commit, so
	// a commit lost in a power cut would leave the copy older than its
	// position says, and IsCurrent would call a stale copy current.
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	var pageSize uint32
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&pageSize); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &applier{path: path, client: client, db: db, pageSize: pageSize, txid: txid}, nil
}

func (a *applier) close() error { return a.db.Close() }

// poll applies the LTX files newer than the copy. current reports that the
// copy reached the newest file the listing showed.
func (a *applier) poll(ctx context.Context) (current bool, err error) {
	itr, err := a.client.LTXFiles(ctx, 0, a.txid+1, false)
	if err != nil {
		return false, fmt.Errorf("list L0: %w", err)
	}
	infos, err := ltx.SliceFileIterator(itr)
	if err != nil {
		return false, fmt.Errorf("list L0: %w", err)
	}
	for _, info := range infos {
		if info.MaxTXID <= a.txid {
			continue
		}
		if info.MinTXID > a.txid+1 {
			// The L0 files the copy needs were compacted away (it fell
			// behind by more than L0's retention): bridge from a higher
			// level, then carry on with L0 at the next poll.
			return false, a.bridge(ctx)
		}
		if err := a.applyFile(ctx, info); err != nil {
			return false, err
		}
	}
	return true, nil
}

// bridge applies the file of a compaction or snapshot level that starts at
// or before the copy's next TXID and reaches furthest. There is always one
// when the replica can be restored at all: a restore needs the same chain.
func (a *applier) bridge(ctx context.Context) error {
	var best *ltx.FileInfo
	for level := 1; level <= litestream.SnapshotLevel; level++ {
		itr, err := a.client.LTXFiles(ctx, level, 0, false)
		if err != nil {
			return fmt.Errorf("list L%d: %w", level, err)
		}
		infos, err := ltx.SliceFileIterator(itr)
		if err != nil {
			return fmt.Errorf("list L%d: %w", level, err)
		}
		for _, info := range infos {
			// A file that starts before the copy's position is fine: its
			// pages are their images at its MaxTXID, which is what the copy
			// holds for pages not changed since.
			if info.MinTXID <= a.txid+1 && info.MaxTXID > a.txid && (best == nil || info.MaxTXID > best.MaxTXID) {
				best = info
			}
		}
	}
	if best == nil {
		return fmt.Errorf("no LTX file in the replica follows TXID %s", a.txid)
	}
	return a.applyFile(ctx, best)
}

// applyFile applies one LTX file in one transaction.
func (a *applier) applyFile(ctx context.Context, info *ltx.FileInfo) error {
	rc, err := a.client.OpenLTXFile(ctx, info.Level, info.MinTXID, info.MaxTXID, 0, 0)
	if err != nil {
		return fmt.Errorf("open L%d %s: %w", info.Level, ltx.FormatFilename(info.MinTXID, info.MaxTXID), err)
	}
	defer rc.Close()
	dec := ltx.NewDecoder(rc)
	if err := dec.DecodeHeader(); err != nil {
		return fmt.Errorf("decode %s: %w", ltx.FormatFilename(info.MinTXID, info.MaxTXID), err)
	}
	hdr := dec.Header()
	if hdr.PageSize != a.pageSize {
		return fmt.Errorf("decode %s: page size %d, the copy's is %d", ltx.FormatFilename(info.MinTXID, info.MaxTXID), hdr.PageSize, a.pageSize)
	}
	return a.write(ctx, hdr.Commit, info.MaxTXID, func(put func(uint32, []byte) error) error {
		buf := make([]byte, a.pageSize)
		for {
			var ph ltx.PageHeader
			if err := dec.DecodePage(&ph, buf); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return err
			}
			if err := put(ph.Pgno, buf); err != nil {
				return err
			}
		}
		// Checks the file's checksum before anything is committed.
		return dec.Close()
	})
}

// write runs pages, which puts page images, in one transaction that leaves
// the copy commit pages long, then records txid as the copy's position. A
// crash between the two re-applies the file: page images are idempotent.
func (a *applier) write(ctx context.Context, commit uint32, txid TXID, pages func(put func(uint32, []byte) error) error) error {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("apply %s: %w", txid, err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO sqlite_dbpage (pgno, data) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("apply %s: %w", txid, err)
	}
	defer st.Close()
	if err := pages(func(pgno uint32, data []byte) error {
		_, err := st.ExecContext(ctx, pgno, data)
		return err
	}); err != nil {
		return fmt.Errorf("apply %s: %w", txid, err)
	}
	// A NULL page truncates the database before that page (no-op if it
	// is not longer): it must be the transaction's last sqlite_dbpage row.
	if _, err := st.ExecContext(ctx, commit+1, nil); err != nil {
		return fmt.Errorf("apply %s: truncate to %d pages: %w", txid, commit, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("apply %s: %w", txid, err)
	}
	if err := litestream.WriteTXIDFile(a.path, txid); err != nil {
		return fmt.Errorf("apply %s: %w", txid, err)
	}
	a.txid = txid
	return nil
}

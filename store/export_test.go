package store

import "context"

// Call is one caller in a batch made by CommitBatch.
type Call struct {
	Ctx context.Context
	Fn  func(*Tx) error
}

// CommitBatch hands the writer calls as one batch, in order, as if they had
// all queued while it was busy, and returns what each caller is told.
func (db *DB) CommitBatch(calls ...Call) []error {
	batch := make([]writeReq, len(calls))
	for i, c := range calls {
		batch[i] = writeReq{ctx: c.Ctx, fn: c.Fn, done: make(chan error, 1)}
	}
	db.batches <- batch
	errs := make([]error, len(batch))
	for i, r := range batch {
		errs[i] = <-r.done
	}
	return errs
}

// Exec runs one statement in tx.
func (tx *Tx) Exec(query string, args ...any) error {
	_, err := tx.exec(query, args...)
	return err
}

// WriteAutoCheckpoint reports the write connection's wal_autocheckpoint.
func (db *DB) WriteAutoCheckpoint() (n int, err error) {
	err = db.write.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&n)
	return n, err
}

package store

import "context"

// QueryInt runs a query that returns one integer, for tests to count rows
// that have no read API (webhook records, plan columns).
func (db *DB) QueryInt(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := db.reader().QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

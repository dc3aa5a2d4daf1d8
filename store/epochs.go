package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/atollhq/atoll"
)

// RecordEpoch records that node became active at epoch (its lease
// generation). Epochs only grow: a node holding an older generation than
// one already recorded was fenced meanwhile and must not write.
func (tx *Tx) RecordEpoch(epoch int64, node, advertiseURL string) error {
	var last sql.NullInt64
	if err := tx.queryRow(`SELECT MAX(epoch) FROM epochs`).Scan(&last); err != nil {
		return fmt.Errorf("store epochs: %w", err)
	}
	if last.Valid && last.Int64 >= epoch {
		return atoll.Errorf(atoll.ECONFLICT, "Epoch %d is not newer than the recorded epoch %d: this node's lease is stale.", epoch, last.Int64)
	}
	if _, err := tx.exec(`INSERT INTO epochs (epoch, node, advertise_url, started_at) VALUES (?, ?, ?, ?)`, epoch, node, advertiseURL, ts(tx.now)); err != nil {
		return fmt.Errorf("store record epoch %d: %w", epoch, err)
	}
	return nil
}

// Epoch is one promotion.
type Epoch struct {
	Epoch     int64
	Node      string
	StartedAt int64
}

// LastEpoch returns the newest recorded epoch, or nil.
func (db *DB) LastEpoch(ctx context.Context) (*Epoch, error) {
	var e Epoch
	err := db.reader().QueryRowContext(ctx, `SELECT epoch, node, started_at FROM epochs ORDER BY epoch DESC LIMIT 1`).Scan(&e.Epoch, &e.Node, &e.StartedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("store last epoch: %w", err)
	}
	return &e, nil
}

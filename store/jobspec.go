package store

import (
	"encoding/json"
	"fmt"

	"github.com/atollhq/atoll"
)

// SetJobSpec replaces a job's spec, for what a job learns while it runs
// (the base commit a merge-strategy plan was made on).
func (tx *Tx) SetJobSpec(id int64, spec atoll.JobSpec) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("store set job %d spec: %w", id, err)
	}
	if _, err := tx.exec(`UPDATE jobs SET spec = ? WHERE id = ?`, string(b), id); err != nil {
		return fmt.Errorf("store set job %d spec: %w", id, err)
	}
	return nil
}

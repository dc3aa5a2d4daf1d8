package store

import (
	"github.com/atollhq/atoll"
)

// Notify records that this transaction changes what c describes. The DB
// publishes it to DB.Changes once the transaction is committed, never for a
// caller whose fn failed (its savepoint is undone) nor for an attempt
// SQLite abandoned (the callers run again, and notify again).
func (tx *Tx) Notify(c atoll.Change) {
	for _, have := range tx.changes {
		if have == c {
			return
		}
	}
	tx.changes = append(tx.changes, c)
}

// notifyPull notifies a change of pull request pullID, naming its
// repository and number for the pages that show only one pull request.
func (tx *Tx) notifyPull(topic string, pullID, jobID int64) {
	c := atoll.Change{Topic: topic, JobID: jobID}
	c.Repo, c.Pull = tx.pullRef(pullID)
	tx.Notify(c)
}

// notifyJob notifies a change of job id.
func (tx *Tx) notifyJob(id int64) {
	var pullID int64
	if err := tx.queryRow(`SELECT pull_id FROM jobs WHERE id = ?`, id).Scan(&pullID); err != nil {
		// Still worth a change: pages re-read without knowing whose it is.
		tx.Notify(atoll.Change{Topic: atoll.TopicJob, JobID: id})
		return
	}
	tx.notifyPull(atoll.TopicJob, pullID, id)
}

// notifyUser notifies that what user id may do changed: its live streams
// check their credential again.
func (tx *Tx) notifyUser(id int64) {
	tx.Notify(atoll.Change{Topic: atoll.TopicUser, UserID: id})
}

// pullRef is the repository (owner/name) and number of pull request id,
// remembered for the transaction; empty if it cannot be read.
func (tx *Tx) pullRef(id int64) (string, int) {
	if ref, ok := tx.pulls[id]; ok {
		return ref.repo, ref.number
	}
	var ref struct {
		repo   string
		number int
	}
	err := tx.queryRow(`SELECT r.owner || '/' || r.name, p.number FROM pulls p JOIN repos r ON r.id = p.repo_id WHERE p.id = ?`, id).
		Scan(&ref.repo, &ref.number)
	if err != nil {
		return "", 0
	}
	if tx.pulls == nil {
		tx.pulls = map[int64]struct {
			repo   string
			number int
		}{}
	}
	tx.pulls[id] = ref
	return ref.repo, ref.number
}

// publish sends the committed changes of an attempt to DB.Changes.
func (db *DB) publish(changes []atoll.Change) {
	if db.Changes == nil {
		return
	}
	for _, c := range changes {
		db.Changes.Publish(c)
	}
}

package store

import (
	"context"
	"fmt"

	"github.com/atollhq/atoll"
)

// UpsertProject returns the id of the project (repo, name, dir, workspace).
func (tx *Tx) UpsertProject(repoID int64, p atoll.Project) (int64, error) {
	var id int64
	err := tx.queryRow(`
		INSERT INTO projects (repo_id, name, dir, workspace) VALUES (?, ?, ?, ?)
		ON CONFLICT (repo_id, name, dir, workspace) DO UPDATE SET dir = excluded.dir
		RETURNING id`, repoID, p.Name, p.Dir, p.Workspace).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store upsert project %s: %w", p.Label(), err)
	}
	return id, nil
}

// PullProjects lists the projects a pull request has jobs for.
func (db *DB) PullProjects(ctx context.Context, pullID int64) ([]atoll.Project, error) {
	rows, err := db.reader().QueryContext(ctx, `
		SELECT DISTINCT pr.id, pr.repo_id, pr.name, pr.dir, pr.workspace
		FROM projects pr JOIN jobs j ON j.project_id = pr.id
		WHERE j.pull_id = ? ORDER BY pr.dir, pr.workspace, pr.name`, pullID)
	if err != nil {
		return nil, fmt.Errorf("store pull %d projects: %w", pullID, err)
	}
	defer rows.Close()
	var out []atoll.Project
	for rows.Next() {
		var p atoll.Project
		if err := rows.Scan(&p.ID, &p.RepoID, &p.Name, &p.Dir, &p.Workspace); err != nil {
			return nil, fmt.Errorf("store pull %d projects: %w", pullID, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

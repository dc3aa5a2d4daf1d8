package main_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

func TestConfigRetention(t *testing.T) {
	const day = 24 * time.Hour
	allow := []string{"--repo-allowlist", "github.com/acme/*"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    store.Retention
		wantErr string
	}{
		{name: "defaults", want: store.Retention{LogLines: 90 * day, Webhooks: 30 * day, Events: 365 * day, PlanFiles: 30 * day}},
		{name: "flags, 0 keeps forever", args: []string{"--retain-logs", "24h", "--retain-webhooks", "72h", "--retain-events", "0", "--retain-plan-files", "0"},
			want: store.Retention{LogLines: day, Webhooks: 3 * day}},
		{name: "environment", env: map[string]string{"ATOLL_RETAIN_LOGS": "0", "ATOLL_RETAIN_WEBHOOKS": "48h", "ATOLL_RETAIN_EVENTS": "8760h", "ATOLL_RETAIN_PLAN_FILES": "1h30m"},
			want: store.Retention{Webhooks: 2 * day, Events: 365 * day, PlanFiles: 90 * time.Minute}},
		{name: "a flag wins over the environment", args: []string{"--retain-plan-files", "2h"}, env: map[string]string{"ATOLL_RETAIN_PLAN_FILES": "1h"},
			want: store.Retention{LogLines: 90 * day, Webhooks: 30 * day, Events: 365 * day, PlanFiles: 2 * time.Hour}},
		{name: "negative", args: []string{"--retain-events", "-1h"}, wantErr: "--retain-events must not be negative"},
		{name: "negative in the environment", env: map[string]string{"ATOLL_RETAIN_LOGS": "-5m"}, wantErr: "--retain-logs must not be negative"},
		{name: "not a duration", env: map[string]string{"ATOLL_RETAIN_WEBHOOKS": "30d"}, wantErr: "ATOLL_RETAIN_WEBHOOKS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := main.NewMain()
			err := m.Config.Parse(append(append([]string{}, allow...), tt.args...), func(k string) string { return tt.env[k] })
			c := m.Config
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Retention != tt.want {
				t.Errorf("retention = %+v, want %+v", c.Retention, tt.want)
			}
		})
	}
}

// TestRetentionRunsOnTheServer: a started server prunes history older than
// its windows, keeps the rest, and stops pruning on Close.
func TestRetentionRunsOnTheServer(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	path := filepath.Join(dataDir, "atoll.db")

	// History written 100 days ago, and some written now.
	past := time.Now().UTC().Add(-100 * 24 * time.Hour)
	db := storetest.Open(t, storetest.Path(path), storetest.Clock(func() time.Time { return past }))
	var oldJob int64
	write := func(detail string) {
		err := db.Update(ctx, func(tx *store.Tx) error {
			repo, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra"})
			if err != nil {
				return err
			}
			pull, err := tx.UpsertPull(repo, atoll.Pull{Number: 1})
			if err != nil {
				return err
			}
			project, err := tx.UpsertProject(repo, atoll.Project{Dir: ".", Workspace: "default"})
			if err != nil {
				return err
			}
			j := &atoll.Job{Kind: atoll.JobPlan, PullID: pull, ProjectID: project, HeadSHA: "abc"}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			oldJob = j.ID
			if err := tx.StartJob(j.ID); err != nil {
				return err
			}
			if err := tx.AppendLogs([]atoll.LogLine{{JobID: j.ID, Seq: 1, Stream: atoll.StreamStdout, Text: "No changes."}}); err != nil {
				return err
			}
			if err := tx.FinishJob(j.ID, atoll.JobSucceeded, "", nil); err != nil {
				return err
			}
			return tx.AddEvent(atoll.Event{Actor: "alice", Action: "plan", Detail: detail})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	write("old")
	old := oldJob
	db.Now = func() time.Time { return time.Now().UTC() }
	write("new")
	young := oldJob
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	m := main.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.DataDir = dataDir
	m.Config.LogLevel = "error"
	m.Config.TerraformBin = filepath.Join(t.TempDir(), "no-terraform") // not needed here
	m.Config.Retention.Events = 0                                      // keep the audit trail forever
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			m.Close()
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		lines, err := m.DB.Logs(ctx, old, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the 100-day-old log was not pruned with --retain-logs 90 days")
		}
	}
	if lines, err := m.DB.Logs(ctx, young, 0, 0); err != nil || len(lines) != 1 {
		t.Errorf("today's log = %+v, %v; want it kept", lines, err)
	}
	events, err := m.DB.Events(ctx, 10)
	var alices int
	for _, e := range events {
		if e.Actor == "alice" {
			alices++
		}
	}
	if err != nil || alices != 2 {
		t.Errorf("events = %+v, %v; want both of alice's kept with --retain-events 0", events, err)
	}
	closed = true
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

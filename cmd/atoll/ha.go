package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/benbjohnson/litestream"
	lss3 "github.com/benbjohnson/litestream/s3"

	"github.com/atollhq/atoll/node"
	"github.com/atollhq/atoll/replica"
)

func (c *Config) checkHA() error {
	if c.ReplicaURL == "" {
		return nil
	}
	if c.Demo {
		return fmt.Errorf("--demo runs a single node: it cannot be used with --replica-url")
	}
	if c.LeaseTTL < time.Second {
		return fmt.Errorf("--lease-ttl %s is too short (at least 1s)", c.LeaseTTL)
	}
	return nil
}

// advertiseURL is --advertise-url, or this node's address as the other
// node can reach it: on Fly.io its private 6PN name.
func (m *Main) advertiseURL(port string) string {
	if u := strings.TrimRight(m.Config.AdvertiseURL, "/"); u != "" {
		return u
	}
	if id, app := os.Getenv("FLY_MACHINE_ID"), os.Getenv("FLY_APP_NAME"); id != "" && app != "" {
		return fmt.Sprintf("http://%s.vm.%s.internal:%s", id, app, port)
	}
	host, _ := os.Hostname()
	return "http://" + host + ":" + port
}

// startNode starts this process as a standby of the replica; the node
// promotes itself when it takes the lease, and then starts the work.
func (m *Main) startNode(ctx context.Context, port string) error {
	c := &m.Config
	client, err := m.replicaClient(c.ReplicaURL)
	if err != nil {
		return err
	}
	leaser, err := replica.NewLeaser(client)
	if err != nil {
		return fmt.Errorf("--replica-url: %w", err)
	}
	m.Node = node.New(node.Config{
		ID: c.NodeID, AdvertiseURL: m.advertiseURL(port), Version: Version, ReplicaURL: c.ReplicaURL,
		Client: client, Leaser: leaser, TTL: c.LeaseTTL, DB: m.DB, Logger: m.Logger, Changes: m.Changes,
		Activate: func(ctx context.Context, epoch int64) error {
			// Only the active node writes: the admin account is set here.
			if err := m.bootstrapAdmin(ctx); err != nil {
				return err
			}
			if err := m.Runner.Start(ctx); err != nil {
				return err
			}
			m.startPruner() // only the active node writes
			return nil
		},
		Deactivate: func(now bool) {
			if now {
				m.Runner.Kill()
			} else {
				m.Runner.Stop()
			}
			if m.stopPruner != nil {
				m.stopPruner()
			}
		},
	})
	m.Server.Cluster = m.Node
	return m.Node.Start(context.WithoutCancel(ctx))
}

// restore is `atoll restore --replica-url URL --output PATH`: disaster
// recovery, the database as the replica last has it.
func restore(args []string, stdout io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	url := fs.String("replica-url", getenv("ATOLL_REPLICA_URL"), "Litestream replica URL to restore from")
	output := fs.String("output", "", "where to write the database (must not exist unless --force)")
	force := fs.Bool("force", false, "replace an existing file at --output")
	if err := fs.Parse(args); err != nil {
		return usageError{err: err}
	}
	if *url == "" || *output == "" || fs.NArg() > 0 {
		return usageError{err: errors.New("usage: atoll restore --replica-url URL --output PATH [--force]")}
	}
	m := NewMain()
	m.Config.ReplicaAccessKeyID, m.Config.ReplicaSecretAccessKey = getenv("ATOLL_REPLICA_ACCESS_KEY_ID"), getenv("ATOLL_REPLICA_SECRET_ACCESS_KEY")
	client, err := m.replicaClient(*url)
	if err != nil {
		return err
	}
	if err := replica.Restore(context.Background(), client, *output, *force); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "Restored %s from %s\n", *output, replica.Redact(*url))
	return nil
}

// replicaClient parses a replica URL and gives an S3 replica the keys of
// --replica-access-key-id and --replica-secret-access-key.
func (m *Main) replicaClient(raw string) (litestream.ReplicaClient, error) {
	client, err := replica.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("--replica-url: %w", err)
	}
	if s3c, ok := client.(*lss3.ReplicaClient); ok && m.Config.ReplicaAccessKeyID != "" {
		s3c.AccessKeyID, s3c.SecretAccessKey = m.Config.ReplicaAccessKeyID, m.Config.ReplicaSecretAccessKey
	}
	return client, nil
}

package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// tlsConfig serves --ssl-cert-file and --ssl-key-file (Atlantis's names).
// The pair is read again when either file changes, so a renewed
// certificate (certbot, cert-manager) is picked up without a restart.
func (c *Config) tlsConfig() (*tls.Config, error) {
	if c.SSLCertFile == "" && c.SSLKeyFile == "" {
		return nil, nil
	}
	kp := &keyPair{cert: c.SSLCertFile, key: c.SSLKeyFile}
	if _, err := kp.get(); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return kp.get() }}, nil
}

type keyPair struct {
	cert, key string

	mu     sync.Mutex
	loaded *tls.Certificate
	stamp  [2]time.Time
}

// get returns the pair, read again if a file's modification time moved. A
// pair that no longer loads (half written) keeps the last good one.
func (k *keyPair) get() (*tls.Certificate, error) {
	var stamp [2]time.Time
	for i, path := range []string{k.cert, k.key} {
		fi, err := os.Stat(path)
		if err != nil {
			return k.fallback(fmt.Errorf("--ssl-%s-file: %w", []string{"cert", "key"}[i], err))
		}
		stamp[i] = fi.ModTime()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.loaded != nil && stamp == k.stamp {
		return k.loaded, nil
	}
	pair, err := tls.LoadX509KeyPair(k.cert, k.key)
	if err != nil {
		if k.loaded != nil {
			return k.loaded, nil
		}
		return nil, fmt.Errorf("--ssl-cert-file/--ssl-key-file: %w", err)
	}
	k.loaded, k.stamp = &pair, stamp
	return k.loaded, nil
}

func (k *keyPair) fallback(err error) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.loaded != nil {
		return k.loaded, nil
	}
	return nil, err
}

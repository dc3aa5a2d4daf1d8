// Package gitcred lends git, while Terraform runs, the credentials of the
// hosts Atoll serves, so that private module sources over http(s) clone
// without the token ever being written down: not in a URL, a git config
// file, a log or Terraform's environment.
//
// The Atoll process serves a Unix socket (in a 0700 directory, itself
// 0600). Each run is granted a random nonce; Terraform's environment gets
// only git configuration naming `atoll git-credential` as the credential
// helper of those hosts, the socket's path and the nonce. The helper asks
// the socket, with the nonce, for the host git wants; the answer exists
// only until the run's grant is revoked.
package gitcred

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll/vcs"
)

// Environment variables the helper reads.
const (
	EnvSocket = "ATOLL_CREDENTIAL_SOCKET"
	EnvNonce  = "ATOLL_CREDENTIAL_NONCE"
)

// socketName is the socket's file name in its directory.
const socketName = "git-credential.sock"

// maxSocketPath is the longest path a Unix socket address holds on Linux
// (sun_path is 108 bytes with its terminating NUL).
const maxSocketPath = 107

// Source answers for the hosts under URL (scheme://host[:port]). Get is
// called each time git asks, so that short-lived tokens are fresh.
type Source struct {
	URL string
	Get func(ctx context.Context) (vcs.GitCredential, error)
}

// Server serves credentials to the helpers of the runs it granted.
type Server struct {
	// Helper is the command line git runs as the credential helper, before
	// git's action argument: the atoll executable and "git-credential".
	Helper []string
	Logger *slog.Logger

	path string
	ln   net.Listener
	dir  string // removed on Close when Listen made it in the temp dir

	mu     sync.Mutex
	grants map[[sha256.Size]byte][]Source
	wg     sync.WaitGroup

	closeOnce sync.Once
}

// request and response are the socket's protocol: one JSON line each way.
type request struct {
	Nonce    string `json:"nonce"`
	Protocol string `json:"protocol"`
	Host     string `json:"host"`
}

type response struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Listen makes dir (0700) and serves a socket in it. When the socket's
// path would be too long for a Unix address, a private directory in the
// system's temp dir is used instead.
func Listen(dir string, helper []string, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Server{Helper: helper, Logger: logger, grants: map[[sha256.Size]byte][]Source{}}
	if len(filepath.Join(dir, socketName)) > maxSocketPath {
		tmp, err := os.MkdirTemp("", "atoll-cred-")
		if err != nil {
			return nil, fmt.Errorf("credential socket dir: %w", err)
		}
		dir, s.dir = tmp, tmp
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("credential socket dir: %w", err)
	}
	// MkdirAll keeps an existing directory's mode.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("credential socket dir: %w", err)
	}
	s.path = filepath.Join(dir, socketName)
	// A socket left by a process that crashed.
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("credential socket: %w", err)
	}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		return nil, fmt.Errorf("credential socket: %w", err)
	}
	if err := os.Chmod(s.path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("credential socket: %w", err)
	}
	s.ln = ln
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Active is the number of grants not yet revoked.
func (s *Server) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.grants)
}

// Close stops serving and removes the socket. Later calls do nothing.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		if err = s.ln.Close(); errors.Is(err, net.ErrClosed) {
			err = nil
		}
		s.wg.Wait()
		if s.dir != "" {
			os.RemoveAll(s.dir)
		}
	})
	return err
}

// Grant lets one run's helpers ask for the sources' credentials until revoke
// is called. env is what the run's git needs in its environment; it holds
// no secret but the nonce, which is worthless once revoked. A nil Server
// or no sources grant nothing.
func (s *Server) Grant(sources ...Source) (env []string, revoke func()) {
	var served []Source
	for _, src := range sources {
		if src.URL != "" && src.Get != nil {
			served = append(served, src)
		}
	}
	if s == nil || len(served) == 0 {
		return nil, func() {}
	}
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	nonce := hex.EncodeToString(b)
	key := sha256.Sum256([]byte(nonce))
	s.mu.Lock()
	s.grants[key] = served
	s.mu.Unlock()
	env = s.environ(served, nonce)
	return env, func() {
		s.mu.Lock()
		delete(s.grants, key)
		s.mu.Unlock()
	}
}

// environ configures the helper for each source's URL through git's
// GIT_CONFIG_* variables (no config file is written), and tells git never
// to prompt: without a terminal it would fail less clearly, or wait. An
// empty helper first clears the helpers of config files for that URL: git
// hands a credential that worked to every helper to store, and one in
// HOME's .gitconfig (`credential.helper store`) would write it to disk.
func (s *Server) environ(sources []Source, nonce string) []string {
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(2*len(sources))}
	helper := "!" + shellJoin(s.Helper)
	for i, src := range sources {
		key := "credential." + src.URL + ".helper"
		for j, value := range []string{"", helper} {
			n := strconv.Itoa(2*i + j)
			env = append(env, "GIT_CONFIG_KEY_"+n+"="+key, "GIT_CONFIG_VALUE_"+n+"="+value)
		}
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", EnvSocket+"="+s.path, EnvNonce+"="+nonce)
}

// shellJoin quotes args for sh, which git runs a "!" helper with.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.Logger.Error("credential socket", "err", err)
			}
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(c)
		}()
	}
}

func (s *Server) handle(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	var req request
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	if err != nil {
		_ = json.NewEncoder(c).Encode(response{Error: "malformed request"})
		return
	}
	_ = json.NewEncoder(c).Encode(s.answer(req))
}

// answer is the credential for the host asked, an empty response for a
// host this run is not granted (git then tries its other helpers), or an
// error for a nonce that is not (or no longer) granted.
func (s *Server) answer(req request) response {
	key := sha256.Sum256([]byte(req.Nonce))
	s.mu.Lock()
	sources, ok := s.grants[key]
	s.mu.Unlock()
	if !ok {
		s.Logger.Warn("git credential asked with a nonce not granted", "host", req.Host)
		return response{Error: "this run's credentials were revoked or never granted (" + EnvNonce + " is not valid)"}
	}
	want := strings.ToLower(req.Protocol + "://" + req.Host)
	for _, src := range sources {
		if strings.ToLower(src.URL) != want {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cred, err := src.Get(ctx)
		cancel()
		if err != nil {
			s.Logger.Error("git credential", "url", src.URL, "err", err)
			return response{Error: "credentials for " + src.URL + " are unavailable: see Atoll's log"}
		}
		s.Logger.Debug("git credential served", "url", src.URL)
		return response{Username: cred.Username, Password: cred.Password}
	}
	return response{}
}

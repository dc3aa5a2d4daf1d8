package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/demo"
	"github.com/atollhq/atoll/repocfg"
)

// repoConfig is the server-side repo config part of Config: Atlantis's
// --repo-config and --repo-config-json.
type repoConfig struct {
	RepoConfig     string // the file given, for messages
	RepoConfigJSON string
	// ServerConfig is the parsed config; nil when neither flag is given.
	ServerConfig *repocfg.ServerConfig
}

// maxRepoConfigSize bounds the file read; real ones are a few KiB.
const maxRepoConfigSize = 1 << 20

// readRepoConfig reads the --repo-config file.
func readRepoConfig(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRepoConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxRepoConfigSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxRepoConfigSize)
	}
	return data, nil
}

// repoConfigMessage is the text of a parse error: its message, which
// names the file, line and key.
func repoConfigMessage(err error) string {
	if atoll.ErrorCode(err) == atoll.EINVALID {
		return atoll.ErrorMessage(err)
	}
	return err.Error()
}

// serverConfig is the server-side repo config the runner uses: the one
// given, the demo's in demo mode, else nil (Atlantis's default). The flags
// parse as they are set; RepoConfig and RepoConfigJSON set otherwise (by
// tests, by embedders) are parsed here.
func (c *Config) serverConfig() (*repocfg.ServerConfig, error) {
	switch {
	case c.ServerConfig != nil:
		return c.ServerConfig, nil
	case c.RepoConfig != "" && c.RepoConfigJSON != "":
		return nil, errors.New("--repo-config and --repo-config-json cannot both be given")
	case c.RepoConfig != "":
		data, err := readRepoConfig(c.RepoConfig)
		if err != nil {
			return nil, fmt.Errorf("--repo-config: %w", err)
		}
		sc, err := repocfg.ParseServerConfig(c.RepoConfig, data)
		if err != nil {
			return nil, fmt.Errorf("--repo-config: %s", repoConfigMessage(err))
		}
		return sc, nil
	case c.RepoConfigJSON != "":
		sc, err := repocfg.ParseServerConfig("--repo-config-json", []byte(c.RepoConfigJSON))
		if err != nil {
			return nil, fmt.Errorf("--repo-config-json: %s", repoConfigMessage(err))
		}
		return sc, nil
	case c.Demo:
		return demo.ServerConfig(), nil
	}
	return nil, nil
}

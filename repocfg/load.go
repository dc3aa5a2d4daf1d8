package repocfg

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/atollhq/atoll"
	"gopkg.in/yaml.v3"
)

// FileNames are the config file names looked for at the repo root: only
// atlantis.yaml, as in Atlantis (see MisnamedFile).
var FileNames = []string{"atlantis.yaml"}

// MisnamedFile is the name Atlantis refuses outright: a repository root
// holding it fails every command that reads the config, whether or not an
// atlantis.yaml is there too, rather than being planned as if it had no
// config (which would quietly drop the settings the author wrote).
const MisnamedFile = "atlantis.yml"

// checkMisnamed refuses a checkout whose root has MisnamedFile, unless
// that is the configured file itself (a server's repo_config_file).
func checkMisnamed(repoRoot, configured string) error {
	if configured == MisnamedFile {
		return nil
	}
	_, err := os.Lstat(filepath.Join(repoRoot, MisnamedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("repocfg: %w", err)
	}
	return atoll.Errorf(atoll.EINVALID, "found %q as config file; rename it using the .yaml extension (%s), which is the only name Atlantis and Atoll read", MisnamedFile, FileNames[0])
}

// maxFileSize bounds what is read from a pull request's checkout; real
// configs are a few KiB.
const maxFileSize = 1 << 20

// Load reads atlantis.yaml from repoRoot. It returns (nil, nil) when there
// is none, and an EINVALID error when the root has an atlantis.yml.
// Unlike Parse, it expands project dirs that are glob patterns
// ("modules/*") against repoRoot.
func Load(repoRoot string) (*Config, error) {
	if err := checkMisnamed(repoRoot, ""); err != nil {
		return nil, err
	}
	for _, name := range FileNames {
		data, err := readFile(filepath.Join(repoRoot, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		return parse(name, data, repoRoot)
	}
	return nil, nil
}

// readFile reads at most maxFileSize+1 bytes so an oversized file is detected
// without loading all of it.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("repocfg: %w", err)
	} else if st.IsDir() {
		return nil, atoll.Errorf(atoll.EINVALID, "%s is a directory, not a file", filepath.Base(path))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("repocfg: read %s: %w", filepath.Base(path), err)
	}
	if len(data) > maxFileSize {
		return nil, atoll.Errorf(atoll.EINVALID, "%s is larger than %d bytes", filepath.Base(path), maxFileSize)
	}
	return data, nil
}

// Parse parses the contents of an atlantis.yaml. Errors are *atoll.Error with
// code EINVALID and a message such as
// "atlantis.yaml line 7: projects[1].dir: must not contain .." (list indexes
// count from 0). A project dir that is a glob pattern is kept as written;
// Load expands it.
func Parse(data []byte) (*Config, error) {
	return parse(FileNames[0], data, "")
}

// parse parses data read from file; a non-empty root is the checkout that
// dir globs are expanded in.
func parse(file string, data []byte, root string) (*Config, error) {
	return (&decoder{file: file, root: root}).parse(data)
}

// parse decodes a whole file with d.
func (d *decoder) parse(data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(d.file, err)
	}
	cfg, err := d.config(&doc)
	if err != nil {
		return nil, err
	}
	cfg.Explicit = true
	cfg.file = d.file
	return cfg, nil
}

// yamlLine matches yaml.v3's "yaml: line N: msg" syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError rewrites a yaml.v3 error into the package's message format.
// The line is yaml.v3's; for some errors it is that of the enclosing
// construct rather than of the offending character, and some have none.
func syntaxError(file string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return atoll.Errorf(atoll.EINVALID, "%s line %s: invalid YAML: %s", file, m[1], m[2])
	}
	return atoll.Errorf(atoll.EINVALID, "%s: invalid YAML: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
}

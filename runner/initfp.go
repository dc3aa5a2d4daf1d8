package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// initInputs is everything that decides what `terraform init` does in a
// project dir, and so whether an earlier init there can stand for it.
type initInputs struct {
	Dir     string   // the project dir (absolute)
	DataDir string   // terraform's data dir for Dir (absolute)
	Args    []string // the workflow's init extra_args
	Env     []string // terraform's whole environment
	Bin     string   // the terraform binary
	Version string   // its version
}

// initFingerprint hashes initInputs and what they point at: the binary's
// identity, the CLI config file, backend config files, the .tf/.tf.json
// files and lock file of the root module and of every local module reachable
// from it, and what the last init left in the data dir (installed modules,
// the initialised backend, installed providers). Any error means the
// fingerprint cannot vouch for a skip: the caller runs init.
func initFingerprint(in initInputs) (string, error) {
	h := sha256.New()
	field := func(name string, values ...string) {
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(values))
		for _, v := range values {
			fmt.Fprintf(h, "%d\x00%s\x00", len(v), v)
		}
	}
	field("args", in.Args...)
	env := append([]string(nil), in.Env...)
	sort.Strings(env)
	field("env", env...)
	field("version", in.Version)
	bin, err := os.Stat(in.Bin)
	if err != nil {
		return "", fmt.Errorf("init fingerprint: terraform binary: %w", err)
	}
	field("bin", in.Bin, fmt.Sprint(bin.Size(), bin.ModTime().UnixNano(), bin.Mode()))
	// Provider installation settings live in the CLI config file.
	cli := envValue(in.Env, "TF_CLI_CONFIG_FILE")
	if cli == "" && envValue(in.Env, "HOME") != "" {
		cli = filepath.Join(envValue(in.Env, "HOME"), ".terraformrc")
	}
	if cli != "" {
		if err := hashOptionalFile(h, "cli-config", cli); err != nil {
			return "", err
		}
	}
	for _, f := range backendConfigFiles(in.Args) {
		if !filepath.IsAbs(f) {
			f = filepath.Join(in.Dir, f)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("init fingerprint: backend config: %w", err)
		}
		field("backend-config", f, string(b))
	}
	if err := hashModules(h, in.Dir); err != nil {
		return "", fmt.Errorf("init fingerprint: %w", err)
	}
	for _, f := range []string{"modules/modules.json", "terraform.tfstate"} {
		if err := hashOptionalFile(h, "data-dir", filepath.Join(in.DataDir, f)); err != nil {
			return "", err
		}
	}
	// Installed providers (usually links into the plugin cache), by name.
	var providers []string
	err = filepath.WalkDir(filepath.Join(in.DataDir, "providers"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		providers = append(providers, p+"\x00"+d.Type().String())
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("init fingerprint: providers: %w", err)
	}
	field("providers", providers...)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashOptionalFile hashes a file's content, or that it does not exist.
func hashOptionalFile(h hash.Hash, name, path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(h, "%s\x00%s\x00absent\x00", name, path)
		return nil
	} else if err != nil {
		return fmt.Errorf("init fingerprint: %w", err)
	}
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00", name, path, len(b))
	h.Write(b)
	return nil
}

// backendConfigFiles lists the files named by -backend-config args: a value
// without "=" is a file, as terraform reads it.
func backendConfigFiles(args []string) []string {
	var files []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if name != "backend-config" || !strings.HasPrefix(args[i], "-") {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				continue
			}
			i++
			value = args[i]
		}
		if !strings.Contains(value, "=") {
			files = append(files, value)
		}
	}
	return files
}

// alwaysInit reports init args whose point is to do work on every run.
func alwaysInit(args []string) bool { return hasFlag(args, "upgrade") }

// hashModules hashes the root module in dir and every local module it
// reaches (module blocks whose source is ./ or ../), recursively: what init
// acts on in their .tf files (see initRelevant), and their .tf.json,
// .tfbackend and lock files whole, named relative to dir. A remote
// module's source and version are in the hashed files; its installed copy
// is covered by modules.json.
func hashModules(h hash.Hash, dir string) error {
	seen := map[string]bool{}
	queue := []string{filepath.Clean(dir)}
	for len(queue) > 0 {
		mod := queue[0]
		queue = queue[1:]
		if seen[mod] {
			continue
		}
		seen[mod] = true
		entries, err := os.ReadDir(mod)
		if err != nil {
			return fmt.Errorf("module %s: %w", mod, err)
		}
		rel, _ := filepath.Rel(dir, mod)
		fmt.Fprintf(h, "module\x00%s\x00", rel)
		for _, e := range entries {
			n := e.Name()
			tf, tfJSON := strings.HasSuffix(n, ".tf"), strings.HasSuffix(n, ".tf.json")
			if e.IsDir() || !(tf || tfJSON || strings.HasSuffix(n, ".tfbackend") || n == ".terraform.lock.hcl") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(mod, n))
			if err != nil {
				return err
			}
			part := b
			if tf {
				part = initRelevant(n, b)
			}
			fmt.Fprintf(h, "%s\x00%d\x00", n, len(part))
			h.Write(part)
			if !tf && !tfJSON {
				continue
			}
			var sources []string
			if tf {
				sources, err = moduleSources(b)
			} else {
				sources, err = moduleSourcesJSON(b)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(rel, n), err)
			}
			for _, s := range sources {
				if strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") {
					queue = append(queue, filepath.Join(mod, filepath.FromSlash(s)))
				}
			}
		}
	}
	return nil
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

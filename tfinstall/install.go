// Package tfinstall keeps a directory of Terraform and OpenTofu binaries
// named as Atlantis names them (terraform1.5.7, tofu1.8.0), picks the one a
// project's terraform_version asks for, and downloads missing versions from
// a release server laid out like releases.hashicorp.com (or OpenTofu's
// GitHub releases), checking each zip against the release's SHA256SUMS.
//
// Signatures of SHA256SUMS are not checked: mirrors (--tf-download-url) are
// not signed with HashiCorp's key, so the checksum file is trusted as
// served; use an https mirror you control.
package tfinstall

import (
	"archive/zip"
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-version"
)

// Distributions, as terraform_distribution and --tf-distribution name them.
const (
	Terraform = "terraform"
	OpenTofu  = "opentofu"
)

// Default release servers.
const (
	DefaultTerraformURL = "https://releases.hashicorp.com"
	DefaultTofuURL      = "https://github.com/opentofu/opentofu/releases/download"
)

// maxBinary caps what is extracted from a release zip.
const maxBinary = 1 << 30

// downloadTimeout bounds one download; it does not end with the job that
// started it, since other jobs may be waiting for the same version.
const downloadTimeout = 15 * time.Minute

// Binary is one installed Terraform or OpenTofu binary.
type Binary struct {
	Path    string
	Version *version.Version
}

// Installer manages Dir. The zero value of the URLs means the defaults.
type Installer struct {
	Dir          string
	Download     bool   // fetch missing versions (--tf-download)
	TerraformURL string // --tf-download-url
	TofuURL      string // --tofu-download-url
	Client       *http.Client
	OS, Arch     string // of the binaries to download; default this machine's

	mu       sync.Mutex
	inflight map[string]*download
}

type download struct {
	done chan struct{}
	bin  Binary
	err  error
}

// Command is the binary name of a distribution: tofu or terraform.
func Command(dist string) string {
	if dist == OpenTofu {
		return "tofu"
	}
	return "terraform"
}

// Installed lists the binaries of dist in Dir; a missing Dir holds none.
func (i *Installer) Installed(dist string) ([]Binary, error) {
	entries, err := os.ReadDir(i.Dir)
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("terraform binaries %s: %w", i.Dir, err)
	}
	prefix := Command(dist)
	var out []Binary
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		v, err := version.NewVersion(rest)
		if err != nil || rest == "" || strings.HasPrefix(rest, "v") {
			continue
		}
		out = append(out, Binary{Path: filepath.Join(i.Dir, e.Name()), Version: v})
	}
	return out, nil
}

// Ensure returns dist's binary at exactly v, downloading it when it is not
// in Dir (and downloads are on). Concurrent callers wanting the same
// version share one download.
func (i *Installer) Ensure(ctx context.Context, dist string, v *version.Version) (Binary, error) {
	path := filepath.Join(i.Dir, Command(dist)+v.String())
	if _, err := os.Stat(path); err == nil {
		return Binary{Path: path, Version: v}, nil
	}
	if !i.Download {
		return Binary{}, fmt.Errorf("%s%s is not installed and downloads are off (--tf-download=false)", Command(dist), v)
	}
	i.mu.Lock()
	if i.inflight == nil {
		i.inflight = map[string]*download{}
	}
	d, ok := i.inflight[path]
	if !ok {
		d = &download{done: make(chan struct{})}
		i.inflight[path] = d
		go func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), downloadTimeout)
			defer cancel()
			d.bin, d.err = i.fetch(dctx, dist, v, path)
			i.mu.Lock()
			delete(i.inflight, path)
			i.mu.Unlock()
			close(d.done)
		}()
	}
	i.mu.Unlock()
	select {
	case <-d.done:
		return d.bin, d.err
	case <-ctx.Done():
		return Binary{}, ctx.Err()
	}
}

func (i *Installer) client() *http.Client {
	if i.Client != nil {
		return i.Client
	}
	return http.DefaultClient
}

// urls are the zip's and the checksum file's addresses and the zip's name.
func (i *Installer) urls(dist string, v *version.Version) (zipURL, sumsURL, zipName string) {
	goos, arch := i.OS, i.Arch
	if goos == "" {
		goos = runtime.GOOS
	}
	if arch == "" {
		arch = runtime.GOARCH
	}
	cmd, s := Command(dist), v.String()
	zipName = fmt.Sprintf("%s_%s_%s_%s.zip", cmd, s, goos, arch)
	var base string
	if dist == OpenTofu {
		base = strings.TrimRight(or(i.TofuURL, DefaultTofuURL), "/") + "/v" + s
	} else {
		base = strings.TrimRight(or(i.TerraformURL, DefaultTerraformURL), "/") + "/terraform/" + s
	}
	return base + "/" + zipName, fmt.Sprintf("%s/%s_%s_SHA256SUMS", base, cmd, s), zipName
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// fetch downloads the release zip, checks it against SHA256SUMS, and
// installs its binary at path: written beside it, then renamed, so that a
// binary at path is always complete.
func (i *Installer) fetch(ctx context.Context, dist string, v *version.Version, path string) (Binary, error) {
	rawZipURL, sumsURL, zipName := i.urls(dist, v)
	zipURL := redact(rawZipURL)
	want, err := i.checksum(ctx, sumsURL, zipName)
	if err != nil {
		return Binary{}, err
	}
	if err := os.MkdirAll(i.Dir, 0o755); err != nil {
		return Binary{}, fmt.Errorf("terraform binaries %s: %w", i.Dir, err)
	}
	zf, err := os.CreateTemp(i.Dir, ".download-*.zip")
	if err != nil {
		return Binary{}, fmt.Errorf("download %s: %w", zipURL, err)
	}
	defer os.Remove(zf.Name())
	defer zf.Close()
	body, err := i.get(ctx, rawZipURL)
	if err != nil {
		return Binary{}, err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(zf, h), body)
	body.Close()
	if err != nil {
		return Binary{}, fmt.Errorf("download %s: %w", zipURL, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return Binary{}, fmt.Errorf("download %s: SHA256 %s does not match %s in the release's SHA256SUMS", zipURL, got, want)
	}
	if err := extract(zf, Command(dist), path); err != nil {
		return Binary{}, fmt.Errorf("install %s: %w", zipURL, err)
	}
	return Binary{Path: path, Version: v}, nil
}

func (i *Installer) get(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	url := redact(rawURL) // for messages: a mirror's URL may hold a password
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	resp, err := i.client().Do(req)
	if err != nil {
		// url.Error repeats the URL: keep only its cause.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("download %s: %s", url, resp.Status)
	}
	return resp.Body, nil
}

// checksum is the SHA256 the checksum file gives for name.
func (i *Installer) checksum(ctx context.Context, url, name string) (string, error) {
	body, err := i.get(ctx, url)
	if err != nil {
		return "", err
	}
	defer body.Close()
	sc := bufio.NewScanner(io.LimitReader(body, 1<<20))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && strings.TrimPrefix(f[1], "*") == name {
			return strings.ToLower(f[0]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("download %s: %w", redact(url), err)
	}
	return "", fmt.Errorf("download %s: no checksum for %s", redact(url), name)
}

// extract writes the zip's entry named cmd to path, executable.
func extract(zf *os.File, cmd, path string) error {
	st, err := zf.Stat()
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(zf, st.Size())
	if err != nil {
		return err
	}
	for _, f := range zr.File {
		if f.Name != cmd {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		tmp, err := os.CreateTemp(filepath.Dir(path), ".install-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		n, err := io.Copy(tmp, io.LimitReader(rc, maxBinary+1))
		if err == nil && n > maxBinary {
			err = fmt.Errorf("%s is larger than %d bytes", cmd, maxBinary)
		}
		if err == nil {
			err = tmp.Chmod(0o755)
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return os.Rename(tmp.Name(), path)
	}
	return fmt.Errorf("the zip holds no %s", cmd)
}

// PathDir is a directory holding only b's binary under its plain name
// (terraform or tofu), made on first use, for the front of run steps'
// PATH: `terraform` in a custom workflow command is then the project's.
func (i *Installer) PathDir(dist string, b Binary) (string, error) {
	cmd := Command(dist)
	abs, err := filepath.Abs(b.Path)
	if err != nil {
		return "", fmt.Errorf("path dir for %s: %w", b.Path, err)
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(i.Dir, ".path", hex.EncodeToString(sum[:8]))
	link := filepath.Join(dir, cmd)
	if target, err := os.Readlink(link); err == nil && target == abs {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("path dir for %s: %w", b.Path, err)
	}
	// A link made beside it and renamed over: concurrent jobs never see
	// the name missing.
	tmp := link + "." + rand.Text() + ".tmp"
	if err := os.Symlink(abs, tmp); err != nil {
		return "", fmt.Errorf("path dir for %s: %w", b.Path, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("path dir for %s: %w", b.Path, err)
	}
	return dir, nil
}

// redact hides the password of a URL with user info.
func redact(u string) string {
	if p, err := neturl.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}

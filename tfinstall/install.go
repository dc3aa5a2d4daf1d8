// Package tfinstall keeps a directory of Terraform and OpenTofu binaries
// named as Atlantis names them (terraform1.5.7, tofu1.8.0), picks the one a
// project's terraform_version asks for, and downloads missing versions.
//
// Downloads are verified as their vendors sign them: Terraform through
// hc-install (the release's SHA256SUMS must carry a valid signature by
// HashiCorp's key, embedded in hc-install, and the zip must match it),
// OpenTofu through tofudl (likewise with OpenTofu's key). A mirror must
// therefore serve the vendor's signed SHA256SUMS unchanged. SkipVerify
// (--tf-download-skip-verify) installs without any check; such binaries
// are marked (Binary.Unverified), so that every job using one says so.
package tfinstall

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/releases"
	"github.com/opentofu/tofudl"
	"github.com/opentofu/tofudl/branding"
)

// Distributions, as terraform_distribution and --tf-distribution name them.
const (
	Terraform = "terraform"
	OpenTofu  = "opentofu"
)

// Default release servers: hc-install's and tofudl's own sources.
const (
	DefaultTerraformURL = "https://releases.hashicorp.com"
	DefaultTofuURL      = "https://github.com/opentofu/opentofu/releases/download"
)

// maxBinary caps what is extracted from an unverified OpenTofu archive.
const maxBinary = 1 << 30

// downloadTimeout bounds one download; it does not end with the job that
// started it, since other jobs may be waiting for the same version.
const downloadTimeout = 15 * time.Minute

// Binary is one installed Terraform or OpenTofu binary.
type Binary struct {
	Path    string
	Version *version.Version
	// Unverified is set for a binary downloaded with SkipVerify: its
	// release's signature and checksums were not checked. Binaries put in
	// the directory by hand, and --terraform-bin, are the operator's own.
	Unverified bool
}

// Installer manages Dir. The zero value of the URLs and keys means the
// defaults.
type Installer struct {
	Dir          string
	Download     bool   // fetch missing versions (--tf-download)
	TerraformURL string // --tf-download-url: hc-install's releases API base URL
	TofuURL      string // --tofu-download-url: see tofuDownloader
	SkipVerify   bool   // --tf-download-skip-verify
	// TerraformKey and TofuKey are armored OpenPGP public keys that
	// release checksums must be signed with instead of the vendors'.
	TerraformKey, TofuKey string
	// Client makes the requests; nil is hc-install's own client (which
	// retries) for Terraform and http.DefaultClient for OpenTofu.
	Client *http.Client

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

// unverifiedMarker is the hidden file beside a binary downloaded without
// verification; it outlives the process, as the binary does.
func unverifiedMarker(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".unverified")
}

func installed(path string, v *version.Version) Binary {
	_, err := os.Stat(unverifiedMarker(path))
	return Binary{Path: path, Version: v, Unverified: err == nil}
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
		out = append(out, installed(filepath.Join(i.Dir, e.Name()), v))
	}
	return out, nil
}

// Ensure returns dist's binary at exactly v, downloading it when it is not
// in Dir (and downloads are on). Concurrent callers wanting the same
// version share one download.
func (i *Installer) Ensure(ctx context.Context, dist string, v *version.Version) (Binary, error) {
	path := filepath.Join(i.Dir, Command(dist)+v.String())
	if _, err := os.Stat(path); err == nil {
		return installed(path, v), nil
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
	// Never nil to tofudl: without a client it changes the TLS settings
	// of http.DefaultTransport, which the whole process shares.
	return http.DefaultClient
}

func (i *Installer) terraformURL() string {
	return strings.TrimRight(cmp.Or(i.TerraformURL, DefaultTerraformURL), "/")
}

func (i *Installer) tofuURL() string {
	return strings.TrimRight(cmp.Or(i.TofuURL, DefaultTofuURL), "/")
}

// fetch downloads dist's release v into a temporary directory of Dir and
// installs its binary at path by renaming, so that a binary at path is
// always complete and nothing of a refused download stays in Dir.
func (i *Installer) fetch(ctx context.Context, dist string, v *version.Version, path string) (Binary, error) {
	base := i.terraformURL()
	get := i.downloadTerraform
	if dist == OpenTofu {
		base, get = i.tofuURL(), i.downloadTofu
	}
	what := fmt.Sprintf("download %s %s from %s", Command(dist), v, redact(base))
	if err := os.MkdirAll(i.Dir, 0o755); err != nil {
		return Binary{}, fmt.Errorf("%s: %w", what, err)
	}
	tmp, err := os.MkdirTemp(i.Dir, ".download-*")
	if err != nil {
		return Binary{}, fmt.Errorf("%s: %w", what, err)
	}
	defer os.RemoveAll(tmp)
	bin, err := get(ctx, v, tmp)
	if err != nil {
		return Binary{}, fmt.Errorf("%s: %s", what, scrub(err.Error(), base))
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		return Binary{}, fmt.Errorf("%s: %w", what, err)
	}
	// The marker is in place before the binary is, and a stale one (of a
	// binary removed by hand) goes before a verified binary arrives.
	marker := unverifiedMarker(path)
	if i.SkipVerify {
		err = os.WriteFile(marker, nil, 0o644)
	} else if err = os.Remove(marker); errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if err == nil {
		if err = os.Rename(bin, path); err != nil && i.SkipVerify {
			os.Remove(marker)
		}
	}
	if err != nil {
		return Binary{}, fmt.Errorf("%s: %w", what, err)
	}
	return Binary{Path: path, Version: v, Unverified: i.SkipVerify}, nil
}

// downloadTerraform installs v with hc-install into dir (which it fills
// with the zip's files) and returns the binary's path.
func (i *Installer) downloadTerraform(ctx context.Context, v *version.Version, dir string) (string, error) {
	ev := &releases.ExactVersion{
		Product:                  product.Terraform,
		Version:                  v,
		InstallDir:               dir,
		Timeout:                  downloadTimeout,
		ApiBaseURL:               i.terraformURL(),
		ArmoredPublicKey:         i.TerraformKey,
		SkipChecksumVerification: i.SkipVerify,
		HTTPClient:               i.Client, // nil: hc-install's, which retries
	}
	var logged bytes.Buffer
	ev.SetLogger(log.New(&logged, "", 0))
	bin, err := ev.Install(ctx)
	if err != nil && strings.Contains(logged.String(), "checksum does not match") {
		// hc-install v0.10.0 loses this error (its deferred clean-up
		// overwrites it) and fails later, for the binary it did not unpack.
		return "", fmt.Errorf("terraform_%s_%s_%s.zip does not match its checksum in the signed SHA256SUMS", v, runtime.GOOS, runtime.GOARCH)
	}
	return bin, err
}

// tofuAPI is where OpenTofu's versions are listed: OpenTofu's own API for
// the default download URL, else {url}/api.json, the layout tofudl's own
// mirror serves.
func (i *Installer) tofuAPI() string {
	if base := i.tofuURL(); base != DefaultTofuURL {
		return base + "/api.json"
	}
	return branding.DefaultDownloadAPIURL
}

// tofuDownloader is tofudl reading --tofu-download-url as a mirror of
// OpenTofu's GitHub releases: {url}/v{VERSION}/{ARTIFACT}.
func (i *Installer) tofuDownloader() (tofudl.Downloader, error) {
	opts := []tofudl.ConfigOpt{
		tofudl.ConfigHTTPClient(i.client()),
		tofudl.ConfigDownloadMirrorURLTemplate(i.tofuURL() + "/v{{ .Version }}/{{ .Artifact }}"),
		tofudl.ConfigAPIURL(i.tofuAPI()),
	}
	if i.TofuKey != "" {
		opts = append(opts, tofudl.ConfigGPGKey(i.TofuKey))
	}
	return tofudl.New(opts...)
}

// downloadTofu writes OpenTofu v's binary, as tofudl downloads and
// verifies it, into dir and returns its path.
func (i *Installer) downloadTofu(ctx context.Context, v *version.Version, dir string) (string, error) {
	dl, err := i.tofuDownloader()
	if err != nil {
		return "", err
	}
	goos, err := tofudl.PlatformAuto.ResolveAuto()
	if err != nil {
		return "", err
	}
	arch, err := tofudl.ArchitectureAuto.ResolveAuto()
	if err != nil {
		return "", err
	}
	// The release's files are named here rather than listed by the API:
	// an exact version needs only the mirror.
	id := v.String()
	archive := fmt.Sprintf("tofu_%s_%s_%s.tar.gz", id, goos, arch)
	rel := tofudl.VersionWithArtifacts{ID: tofudl.Version(id), Files: []string{
		"tofu_" + id + "_SHA256SUMS", "tofu_" + id + "_SHA256SUMS.gpgsig", archive,
	}}
	var bin []byte
	if i.SkipVerify {
		bin, err = unverifiedTofu(ctx, dl, rel, archive)
	} else {
		bin, err = dl.DownloadVersion(ctx, rel, goos, arch)
	}
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "tofu")
	return path, os.WriteFile(path, bin, 0o755)
}

// unverifiedTofu is the tofu binary of the release's archive, unchecked:
// tofudl cannot skip its verification.
func unverifiedTofu(ctx context.Context, dl tofudl.Downloader, rel tofudl.VersionWithArtifacts, archive string) ([]byte, error) {
	data, err := dl.DownloadArtifact(ctx, rel, archive)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", archive, err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", archive, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s holds no tofu", archive)
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", archive, err)
		}
		if h.Name == "tofu" && h.Typeflag == tar.TypeReg {
			bin, err := io.ReadAll(io.LimitReader(tr, maxBinary+1))
			if err == nil && len(bin) > maxBinary {
				err = fmt.Errorf("tofu is larger than %d bytes", maxBinary)
			}
			return bin, err
		}
	}
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

// scrub hides the password of base wherever a library's message repeats
// a URL under it.
func scrub(msg, base string) string {
	p, err := neturl.Parse(base)
	if err != nil || p.User == nil {
		return msg
	}
	if _, ok := p.User.Password(); !ok {
		return msg
	}
	return strings.ReplaceAll(msg, p.User.String()+"@", neturl.UserPassword(p.User.Username(), "xxxxx").String()+"@")
}

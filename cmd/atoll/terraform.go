package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"

	"github.com/atollhq/atoll/tfinstall"
)

// terraformConfig is the Terraform versions part of Config: Atlantis's
// --tf-download, --tf-download-url and --tf-distribution, and Atoll's
// --tf-bin-dir, --tofu-download-url and --tf-download-skip-verify.
// --default-tf-version is in Config.
type terraformConfig struct {
	TFBinDir             string // default DATA_DIR/bin
	TFDownload           bool
	TFDownloadURL        string
	TofuDownloadURL      string
	TFDownloadSkipVerify bool
	TFDistribution       string
}

// installer is the runner's directory of Terraform versions. Downloads
// without verification are warned of here, once, and in each job using
// such a binary.
func (c *terraformConfig) installer(dataDir string, logger *slog.Logger) (*tfinstall.Installer, error) {
	dir := c.TFBinDir
	if dir == "" {
		dir = filepath.Join(dataDir, "bin")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--tf-bin-dir: %w", err)
	}
	for flag, u := range map[string]string{"tf-download-url": c.TFDownloadURL, "tofu-download-url": c.TofuDownloadURL} {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return nil, fmt.Errorf("--%s %q: not an http(s) URL", flag, u)
		}
	}
	if c.TFDownload && c.TFDownloadSkipVerify {
		logger.Warn("--tf-download-skip-verify: Terraform and OpenTofu downloads are installed without checking their release's signature or checksums; whoever controls --tf-download-url or --tofu-download-url chooses the binaries that run with the projects' cloud credentials")
	}
	return &tfinstall.Installer{Dir: dir, Download: c.TFDownload, TerraformURL: c.TFDownloadURL, TofuURL: c.TofuDownloadURL,
		SkipVerify: c.TFDownloadSkipVerify}, nil
}

// checkDefaultTerraform makes sure at start, when --default-tf-version is
// given, that it can be run (downloading it, as Atlantis does).
func (m *Main) checkDefaultTerraform(ctx context.Context) error {
	c := &m.Config
	if c.DefaultTFVersion == "" {
		return nil
	}
	b, err := m.Runner.SelectTerraform(ctx, "", "")
	if err != nil {
		return fmt.Errorf("--default-tf-version %s: %w", c.DefaultTFVersion, err)
	}
	m.Logger.Info("default terraform version", "version", b.Version, "bin", b.Path)
	return nil
}

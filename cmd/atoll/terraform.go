package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"

	"github.com/atollhq/atoll/tfinstall"
)

// terraformConfig is the Terraform versions part of Config: Atlantis's
// --tf-download, --tf-download-url and --tf-distribution, and Atoll's
// --tf-bin-dir and --tofu-download-url. --default-tf-version is in Config.
type terraformConfig struct {
	TFBinDir        string // default DATA_DIR/bin
	TFDownload      bool
	TFDownloadURL   string
	TofuDownloadURL string
	TFDistribution  string
}

func terraformFlags(fs *flag.FlagSet, c *terraformConfig) {
	fs.StringVar(&c.TFBinDir, "tf-bin-dir", "", "directory of the Terraform versions projects ask for with terraform_version, named as Atlantis names them: terraform1.5.7, tofu1.8.0 (default DATA_DIR/bin)")
	fs.BoolVar(&c.TFDownload, "tf-download", true, "download the Terraform (or OpenTofu) version a project asks for into --tf-bin-dir when it is not there")
	fs.StringVar(&c.TFDownloadURL, "tf-download-url", tfinstall.DefaultTerraformURL, "release server Terraform is downloaded from, laid out like releases.hashicorp.com (zips are checked against SHA256SUMS; signatures are not checked)")
	fs.StringVar(&c.TofuDownloadURL, "tofu-download-url", tfinstall.DefaultTofuURL, "release server OpenTofu is downloaded from, laid out like its GitHub releases (v{VERSION}/tofu_{VERSION}_{OS}_{ARCH}.zip)")
	c.TFDistribution = tfinstall.Terraform
	fs.Func("tf-distribution", "terraform or opentofu: the distribution of projects without terraform_distribution (default terraform)", func(s string) error {
		if !slices.Contains([]string{tfinstall.Terraform, tfinstall.OpenTofu}, s) {
			return fmt.Errorf("%q is not terraform or opentofu", s)
		}
		c.TFDistribution = s
		return nil
	})
}

// installer is the runner's directory of Terraform versions.
func (c *terraformConfig) installer(dataDir string) (*tfinstall.Installer, error) {
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
	return &tfinstall.Installer{Dir: dir, Download: c.TFDownload, TerraformURL: c.TFDownloadURL, TofuURL: c.TofuDownloadURL}, nil
}

// setupTerraform gives the runner its Terraform versions and, when
// --default-tf-version is given, makes sure at start that it can be run
// (downloading it, as Atlantis does).
func (m *Main) setupTerraform(ctx context.Context, dataDir string) error {
	c := &m.Config
	in, err := c.installer(dataDir)
	if err != nil {
		return err
	}
	m.Runner.TFInstall, m.Runner.TFDistribution, m.Runner.DefaultTFVersion = in, c.TFDistribution, c.DefaultTFVersion
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

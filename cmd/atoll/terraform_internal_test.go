package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// --tf-download-skip-verify reaches the installer and is warned of once at
// start; without it, or with downloads off, nothing is logged.
func TestInstallerSkipVerifyWarns(t *testing.T) {
	for _, c := range []struct {
		download, skip, warned bool
	}{
		{true, false, false},
		{true, true, true},
		{false, true, false},
	} {
		var logged bytes.Buffer
		tc := terraformConfig{TFDownload: c.download, TFDownloadSkipVerify: c.skip,
			TFDownloadURL: "https://mirror.example.com", TofuDownloadURL: "https://mirror.example.com/tofu"}
		in, err := tc.installer(t.TempDir(), slog.New(slog.NewTextHandler(&logged, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if in.SkipVerify != c.skip {
			t.Errorf("%+v: installer SkipVerify %v", c, in.SkipVerify)
		}
		warned := strings.Contains(logged.String(), "level=WARN") && strings.Contains(logged.String(), "--tf-download-skip-verify")
		if warned != c.warned {
			t.Errorf("%+v: warned %v, want %v: %q", c, warned, c.warned, logged.String())
		}
	}
}

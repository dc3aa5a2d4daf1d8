package tfinstall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hashicorp/go-version"
)

// ErrNoVersion is wrapped by Select's errors when nothing satisfies the
// project's terraform_version.
var ErrNoVersion = errors.New("no version that satisfies it can be run")

// Select picks dist's binary for want, a project's terraform_version:
// an exact version ("1.5.7", "v1.5.7", "= 1.5.7") is that version,
// downloaded when missing; a constraint ("~> 1.5") is the newest installed
// binary meeting it (extra counts as installed: the server's default
// binary), else, with downloads on, the newest released version meeting it.
func (i *Installer) Select(ctx context.Context, dist, want string, extra ...Binary) (Binary, error) {
	want = strings.TrimSpace(want)
	if v, ok := exact(want); ok {
		for _, b := range extra {
			if b.Version != nil && b.Version.Equal(v) {
				return b, nil
			}
		}
		b, err := i.Ensure(ctx, dist, v)
		if err != nil {
			return Binary{}, fmt.Errorf("%w: %s", ErrNoVersion, err)
		}
		return b, nil
	}
	c, err := version.NewConstraint(want)
	if err != nil {
		return Binary{}, fmt.Errorf("terraform_version %q is not a version or constraint: %w", want, err)
	}
	installed, err := i.Installed(dist)
	if err != nil {
		return Binary{}, err
	}
	all := append(installed, extra...)
	var best *Binary
	for k, b := range all {
		if b.Version != nil && c.Check(b.Version) && (best == nil || b.Version.GreaterThan(best.Version)) {
			best = &all[k]
		}
	}
	if best != nil {
		return *best, nil
	}
	have := Versions(all)
	if !i.Download {
		return Binary{}, fmt.Errorf("%w (installed: %s; downloads are off: --tf-download=false)", ErrNoVersion, have)
	}
	released, err := i.Released(ctx, dist)
	if err != nil {
		return Binary{}, fmt.Errorf("%w (installed: %s; the released versions could not be listed: %s)", ErrNoVersion, have, err)
	}
	var pick *version.Version
	for _, v := range released {
		if v.Prerelease() == "" && c.Check(v) && (pick == nil || v.GreaterThan(pick)) {
			pick = v
		}
	}
	if pick == nil {
		return Binary{}, fmt.Errorf("%w (installed: %s; none released meets it either)", ErrNoVersion, have)
	}
	b, err := i.Ensure(ctx, dist, pick)
	if err != nil {
		return Binary{}, fmt.Errorf("%w: %s", ErrNoVersion, err)
	}
	return b, nil
}

// exact reports whether want names one version, as Atlantis reads it.
func exact(want string) (*version.Version, bool) {
	s := strings.TrimSpace(strings.TrimPrefix(want, "="))
	if s != want && strings.HasPrefix(s, "=") {
		return nil, false
	}
	v, err := version.NewVersion(s)
	return v, err == nil
}

// Versions lists the binaries' versions, newest first, for messages.
func Versions(bins []Binary) string {
	var vs []*version.Version
	for _, b := range bins {
		if b.Version != nil && !slices.ContainsFunc(vs, b.Version.Equal) {
			vs = append(vs, b.Version)
		}
	}
	if len(vs) == 0 {
		return "none"
	}
	slices.SortFunc(vs, func(a, b *version.Version) int { return b.Compare(a) })
	s := make([]string, len(vs))
	for k, v := range vs {
		s[k] = v.String()
	}
	return strings.Join(s, ", ")
}

// Released lists the versions the release server has: its
// /terraform/index.json, as releases.hashicorp.com serves it. OpenTofu's
// releases are not listed: constraints for tofu need an installed binary.
func (i *Installer) Released(ctx context.Context, dist string) ([]*version.Version, error) {
	if dist == OpenTofu {
		return nil, errors.New("OpenTofu versions are not listed: install one, or ask for an exact version")
	}
	url := strings.TrimRight(or(i.TerraformURL, DefaultTerraformURL), "/") + "/terraform/index.json"
	body, err := i.get(ctx, url)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var idx struct {
		Versions map[string]json.RawMessage `json:"versions"`
	}
	if err := json.NewDecoder(io.LimitReader(body, 64<<20)).Decode(&idx); err != nil {
		return nil, fmt.Errorf("%s: %w", redact(url), err)
	}
	var out []*version.Version
	for s := range idx.Versions {
		if v, err := version.NewVersion(s); err == nil {
			out = append(out, v)
		}
	}
	return out, nil
}

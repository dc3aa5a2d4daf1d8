package tfinstall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/releases"
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
	released, err := i.Released(ctx, dist, c)
	if err != nil {
		return Binary{}, fmt.Errorf("%w (installed: %s; the released versions could not be listed: %s)", ErrNoVersion, have, err)
	}
	var pick *version.Version
	for _, v := range released {
		if v.Prerelease() == "" && (pick == nil || v.GreaterThan(pick)) {
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

// Released lists the versions meeting c that the release server has: for
// Terraform those of its /terraform/index.json, as hc-install reads it;
// for OpenTofu those of the list tofudl reads (see tofuAPI).
func (i *Installer) Released(ctx context.Context, dist string, c version.Constraints) ([]*version.Version, error) {
	if dist == OpenTofu {
		return i.releasedTofu(ctx, c)
	}
	base := i.terraformURL()
	list := &releases.Versions{Product: product.Terraform, Constraints: c, ApiBaseURL: base, HTTPClient: i.Client}
	found, err := list.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("terraform versions from %s: %s", redact(base), scrub(err.Error(), base))
	}
	var out []*version.Version
	for _, s := range found {
		if ev, ok := s.(*releases.ExactVersion); ok {
			out = append(out, ev.Version)
		}
	}
	return out, nil
}

func (i *Installer) releasedTofu(ctx context.Context, c version.Constraints) ([]*version.Version, error) {
	api := i.tofuAPI()
	dl, err := i.tofuDownloader()
	if err != nil {
		return nil, fmt.Errorf("tofu versions from %s: %w", redact(api), err)
	}
	list, err := dl.ListVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("tofu versions from %s: %s", redact(api), scrub(err.Error(), api))
	}
	out := make([]*version.Version, 0, len(list))
	for _, r := range list {
		if v, err := version.NewVersion(string(r.ID)); err == nil && c.Check(v) {
			out = append(out, v)
		}
	}
	return out, nil
}

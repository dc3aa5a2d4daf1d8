package azuredevops

import (
	"net/url"
	"strings"
)

// legacyDomain is where Azure DevOps Services organizations lived before
// dev.azure.com: ORG.visualstudio.com is dev.azure.com/ORG.
const legacyDomain = ".visualstudio.com"

// splitURL reads the organization (collection, on Azure DevOps Server) from
// a URL of a payload, relative to the configured host, and returns the path
// segments after it. The rule:
//
//   - On the configured host, under its virtual directory, the organization
//     is the first path segment: https://dev.azure.com/ORG/...,
//     https://tfs.example.com/tfs/COLLECTION/....
//   - When the configured host is dev.azure.com, ORG.visualstudio.com is
//     accepted as well: organizations that never switched to the new
//     address still get payloads with their old one. There the organization
//     is the host's first label, and a leading DefaultCollection segment
//     (the old URLs' fixed collection name) is skipped.
//
// So Microsoft's samples, which mix https://dev.azure.com/fabrikam/
// DefaultCollection/... and https://fabrikam.visualstudio.com/
// DefaultCollection/..., both name the organization fabrikam. Organization
// names are case-insensitive: they are lower-cased so that one organization
// has one identity. Any other host is refused: a webhook must not make Atoll
// fetch from, or send its credentials to, a server it was not configured for.
func (p *Provider) splitURL(field, raw string) (org string, rest []string, err error) {
	u, perr := url.Parse(raw)
	if perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", nil, invalid("%s is not an http(s) URL", field)
	}
	segs := pathSegments(u)
	host := strings.ToLower(u.Host)
	switch {
	case host == strings.ToLower(p.base.Host):
		base := pathSegments(p.base)
		if len(segs) <= len(base) {
			return "", nil, invalid("%s has no organization after %s", field, p.Host())
		}
		for i, s := range base {
			if !strings.EqualFold(segs[i], s) {
				return "", nil, invalid("%s is not under %s", field, p.Host())
			}
		}
		org, rest = segs[len(base)], segs[len(base)+1:]
	case strings.EqualFold(p.base.Host, DefaultHostname) && strings.HasSuffix(host, legacyDomain):
		org, rest = strings.TrimSuffix(host, legacyDomain), segs
		if len(rest) > 0 && strings.EqualFold(rest[0], "DefaultCollection") {
			rest = rest[1:]
		}
	default:
		return "", nil, invalid("%s is on %s, not on the configured Azure DevOps host %s", field, u.Host, p.Host())
	}
	// "_apis", "_git"... are routes, not organizations; a dot would be a
	// deeper subdomain (vssps.visualstudio.com serves identities).
	if org == "" || strings.HasPrefix(org, "_") || strings.Contains(org, ".") {
		return "", nil, invalid("%s names no organization", field)
	}
	return strings.ToLower(org), rest, nil
}

// pathSegments splits u's path into unescaped, non-empty segments.
func pathSegments(u *url.URL) []string {
	var segs []string
	for _, s := range strings.Split(u.EscapedPath(), "/") {
		if s == "" {
			continue
		}
		if v, err := url.PathUnescape(s); err == nil {
			s = v
		}
		segs = append(segs, s)
	}
	return segs
}

func pathEscape(s string) string { return url.PathEscape(s) }

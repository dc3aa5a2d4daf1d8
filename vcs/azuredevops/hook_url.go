package azuredevops

import (
	"net/url"
	"strings"

	"github.com/atollhq/atoll"
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
//   - On a notification URL the operator named (Config.NotificationURLs),
//     the same: an Azure DevOps Server writes its own public URL into
//     payloads (http://tfs01:8080/tfs/COLLECTION/...), which need not be
//     the name Atoll reaches it by. The organization found there is the one
//     on the configured host: Atoll calls, clones and sends credentials to
//     the configured host only.
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
	matched := false
	for _, base := range append([]*url.URL{p.base}, p.notify...) {
		if host != strings.ToLower(base.Host) {
			continue
		}
		if org, rest, err = underBase(field, segs, base); err != nil {
			return "", nil, err
		}
		matched = true
		break
	}
	switch {
	case matched:
	case strings.EqualFold(p.base.Host, DefaultHostname) && strings.HasSuffix(host, legacyDomain):
		org, rest = strings.TrimSuffix(host, legacyDomain), segs
		if len(rest) > 0 && strings.EqualFold(rest[0], "DefaultCollection") {
			rest = rest[1:]
		}
	case !strings.EqualFold(p.base.Host, DefaultHostname):
		// An Azure DevOps Server names itself by its public URL, set in
		// its administration console: say how to accept it.
		return "", nil, invalid("%s is on %s, not on the configured Azure DevOps host %s: if that is this server's public (notification) URL, name it with --azuredevops-notification-url %s://%s",
			field, u.Host, p.Host(), u.Scheme, u.Host)
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

// underBase reads the organization of a URL's path segments on base's host:
// the segment after base's virtual directory.
func underBase(field string, segs []string, base *url.URL) (org string, rest []string, err error) {
	dir := pathSegments(base)
	name := base.Host + base.Path
	if len(segs) <= len(dir) {
		return "", nil, invalid("%s has no organization after %s", field, name)
	}
	for i, s := range dir {
		if !strings.EqualFold(segs[i], s) {
			return "", nil, invalid("%s is not under %s", field, name)
		}
	}
	return segs[len(dir)], segs[len(dir)+1:], nil
}

// parseNotificationURLs checks Config.NotificationURLs: each is an http(s)
// URL with an optional virtual directory, on Azure DevOps Server (Services
// payloads name dev.azure.com or ORG.visualstudio.com, which are accepted
// already), and not the configured host itself.
func parseNotificationURLs(raws []string, base *url.URL) ([]*url.URL, error) {
	var out []*url.URL
	for _, raw := range raws {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(strings.TrimRight(raw, "/"))
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return nil, atoll.Errorf(atoll.EINVALID, "--azuredevops-notification-url %q is not an http(s) URL such as http://tfs01:8080/tfs.", raw)
		}
		if strings.EqualFold(base.Host, DefaultHostname) {
			return nil, atoll.Errorf(atoll.EINVALID, "--azuredevops-notification-url is for Azure DevOps Server (set --azuredevops-hostname to the server): Azure DevOps Services payloads name dev.azure.com or ORG.visualstudio.com, which are accepted already.")
		}
		if strings.EqualFold(u.Host, base.Host) && strings.EqualFold(strings.TrimRight(u.Path, "/"), strings.TrimRight(base.Path, "/")) {
			return nil, atoll.Errorf(atoll.EINVALID, "--azuredevops-notification-url %q is --azuredevops-hostname itself.", raw)
		}
		out = append(out, u)
	}
	return out, nil
}

// NotificationURLs are the other URLs payloads may name this server by
// (Config.NotificationURLs), for the start-up message.
func (p *Provider) NotificationURLs() []string {
	var out []string
	for _, u := range p.notify {
		out = append(out, u.String())
	}
	return out
}

// BaseURL is the URL Atoll calls this host by (--azuredevops-hostname with
// its scheme).
func (p *Provider) BaseURL() string { return p.base.String() }

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

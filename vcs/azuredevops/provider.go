package azuredevops

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/atollhq/atoll"
)

// Provider talks to one Azure DevOps host (Services or Server). It is safe
// for concurrent use.
type Provider struct {
	Recognizer
	cfg  Config
	base *url.URL // scheme, host and virtual directory; an organization is base/ORG
	// notify are other URLs of the same server that payloads may use
	// (Config.NotificationURLs); see splitURL.
	notify  []*url.URL
	ignores ignoreLog // what ignored deliveries were logged, when
	log     *slog.Logger
	http    *http.Client // the API's client (see api.go)
	// sleeper waits between looks at a queued completion (merge.go); a
	// timer when nil.
	sleeper func(context.Context, time.Duration) error
}

// New checks cfg and returns a Provider.
func New(cfg Config) (*Provider, error) {
	if cfg.Hostname == "" {
		cfg.Hostname = DefaultHostname
	}
	base, err := parseHostname(cfg.Hostname)
	if err != nil {
		return nil, err
	}
	notify, err := parseNotificationURLs(cfg.NotificationURLs, base)
	if err != nil {
		return nil, err
	}
	if cfg.Credential == nil {
		return nil, atoll.Errorf(atoll.EINVALID, "Azure DevOps needs a token (--azuredevops-token) or a service principal.")
	}
	if (cfg.WebhookUser == "") != (cfg.WebhookPassword == "") {
		return nil, atoll.Errorf(atoll.EINVALID, "Azure DevOps webhooks need both --azuredevops-webhook-user and --azuredevops-webhook-password.")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	hc := apiHTTPClient(cfg.HTTPClient)
	hc.Transport = reauthTransport{base: hc.Transport, cred: cfg.Credential}
	return &Provider{cfg: cfg, base: base, notify: notify, log: log, http: hc}, nil
}

// parseHostname turns --azuredevops-hostname into a base URL.
func parseHostname(h string) (*url.URL, error) {
	raw := h
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, atoll.Errorf(atoll.EINVALID, "--azuredevops-hostname %q is not a host name or an http(s) base URL.", h)
	}
	return u, nil
}

// Host is what Repo.Host reports: the host name with its virtual directory
// ("dev.azure.com", "tfs.example.com/tfs").
func (p *Provider) Host() string { return p.base.Host + p.base.Path }

// PullRefs implements vcs.Provider: Azure Repos has no head ref for a pull
// request, only its merge commit under refs/pull/N/merge, whose second
// parent is the source commit; fetching it makes a fork's commits reachable.
func (p *Provider) PullRefs(number int) []string {
	return []string{fmt.Sprintf("refs/pull/%d/merge", number)}
}

// An Azure DevOps repository is atoll.Repo{Owner: "ORG/PROJECT", Name:
// REPO}, so its FullName is ORG/PROJECT/REPO, as in Atlantis.

// repoPath splits repo into its organization (collection), project and
// repository names.
func repoPath(repo atoll.Repo) (org, project, name string, err error) {
	org, project, ok := strings.Cut(repo.Owner, "/")
	if !ok || org == "" || project == "" || strings.Contains(project, "/") || repo.Name == "" {
		return "", "", "", atoll.Errorf(atoll.EINVALID, "Azure DevOps repository %q is not organization/project/repository.", repo.FullName())
	}
	return org, project, repo.Name, nil
}

// orgURL is the URL of an organization (collection): the SDK's base URL.
func (p *Provider) orgURL(org string) string {
	return p.base.String() + "/" + url.PathEscape(org)
}

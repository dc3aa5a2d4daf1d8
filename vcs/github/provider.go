// Package github is the vcs.Provider for GitHub and GitHub Enterprise, built
// on go-github. It authenticates either with a user token or as a GitHub App
// installation.
package github

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// Config configures a Provider. Either Token or AppID+AppKeyFile is required,
// and WebhookSecret must be set for ParseWebhook to accept anything.
type Config struct {
	// Hostname is the host repositories live on: "github.com" (the default)
	// or a GitHub Enterprise host. It is what Repo.Host reports.
	Hostname string
	// APIURL is the full REST base URL. It overrides the one derived from
	// Hostname (GHE proxies, tests); GraphQL is derived from it.
	APIURL string
	// User is the bot's login; its comments are the ones HideComments may
	// minimize. With App auth it defaults to "<app-slug>[bot]".
	User          string
	Token         string
	WebhookSecret string
	AppID         int64
	// AppKeyFile is the App's PEM private key. Installation ids come from
	// webhook payloads or are looked up per repository.
	AppKeyFile string
	// AppKey is the PEM key itself, instead of AppKeyFile (Atlantis's
	// --gh-app-key, usually from the environment).
	AppKey string
	// Checks reports through check runs (the Checks API) instead of commit
	// statuses. GitHub accepts check runs only from an App, so it needs
	// AppID and AppKeyFile.
	Checks bool
	// AllowMergeableBypassApply (Atlantis's --gh-allow-mergeable-bypass-apply)
	// counts a "blocked" pull request mergeable when the only unmet
	// required checks are Atoll's own apply statuses (bypass.go).
	AllowMergeableBypassApply bool
	// StatusName is the prefix of Atoll's statuses ("atlantis"), which
	// names the apply checks the bypass ignores.
	StatusName string
	// IgnoreStatusNames (Atlantis's --ignore-vcs-status-names) are the
	// status names of other Atlantis-like instances: with
	// AllowMergeableBypassApply, a required check whose context is one of
	// them or starts with one of them and "/" does not block.
	IgnoreStatusNames []string
	// Logger receives why a bypass was refused; nil: slog.Default().
	Logger     *slog.Logger
	HTTPClient *http.Client // optional; its Transport is wrapped with auth
}

// Provider talks to one GitHub host. It is safe for concurrent use.
type Provider struct {
	cfg        Config
	host       string
	restURL    string // with trailing slash, as go-github requires
	graphqlURL string
	customAPI  bool // APIURL was given: clone URLs come from payloads

	token *tokenAuth // exactly one of token and app is set
	app   *appAuth

	checks checkRuns // with cfg.Checks: the check run of each status
	teams  teamCache // recent UserTeams answers
}

var _ vcs.Provider = (*Provider)(nil)

// defaultTimeout bounds API calls when the caller gives no HTTP client, so
// a hung GitHub cannot wedge a worker forever.
const defaultTimeout = 30 * time.Second

// New validates cfg and builds a Provider. It does not call GitHub, except
// that a malformed App key is reported here rather than on first use.
func New(cfg Config) (*Provider, error) {
	p := &Provider{cfg: cfg, host: cfg.Hostname, customAPI: cfg.APIURL != ""}
	if p.host == "" {
		p.host = "github.com"
	}
	if strings.ContainsAny(p.host, "/@?# ") {
		return nil, atoll.Errorf(atoll.EINVALID, "github: hostname %q must be a bare host name", cfg.Hostname)
	}
	var err error
	if p.restURL, p.graphqlURL, err = endpoints(cfg.APIURL, p.host); err != nil {
		return nil, err
	}

	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: defaultTimeout}
	}
	hasKey := cfg.AppKeyFile != "" || cfg.AppKey != ""
	switch {
	case cfg.AppKeyFile != "" && cfg.AppKey != "":
		return nil, atoll.Errorf(atoll.EINVALID, "github: set either an app key or an app key file, not both")
	case cfg.Token != "" && (cfg.AppID != 0 || hasKey):
		return nil, atoll.Errorf(atoll.EINVALID, "github: set either a token or GitHub App credentials, not both")
	case cfg.Token != "":
		p.token, err = newTokenAuth(cfg.Token, base, p.restURL)
	case cfg.AppID != 0 && hasKey:
		p.app, err = newAppAuth(cfg.AppID, cfg.AppKeyFile, []byte(cfg.AppKey), base, p.restURL)
	case cfg.AppID != 0 || hasKey:
		return nil, atoll.Errorf(atoll.EINVALID, "github: a GitHub App needs both an app id and a key file")
	default:
		return nil, atoll.Errorf(atoll.EINVALID, "github: a token or GitHub App credentials are required")
	}
	if err != nil {
		return nil, err
	}
	if cfg.Checks && p.app == nil {
		return nil, atoll.Errorf(atoll.EINVALID, "github: check runs need GitHub App credentials: GitHub refuses check runs from tokens")
	}
	return p, nil
}

// Kind reports atoll.VCSGitHub.
func (p *Provider) Kind() string { return atoll.VCSGitHub }

// endpoints derives the REST and GraphQL URLs. github.com serves both from
// api.github.com; GHE serves REST under /api/v3/ and GraphQL at /api/graphql.
func endpoints(apiURL, host string) (rest, graphql string, err error) {
	if apiURL == "" {
		if host == "github.com" {
			return "https://api.github.com/", "https://api.github.com/graphql", nil
		}
		return "https://" + host + "/api/v3/", "https://" + host + "/api/graphql", nil
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", "", atoll.Errorf(atoll.EINVALID, "github: API URL must be an http(s) URL without credentials")
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	rest = u.String()
	if strings.HasSuffix(u.Path, "/api/v3/") {
		u.Path = strings.TrimSuffix(u.Path, "v3/") + "graphql"
		return rest, u.String(), nil
	}
	return rest, rest + "graphql", nil
}

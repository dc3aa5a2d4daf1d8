package azuredevops

import (
	"context"
	"log/slog"
	"net/http"
)

// DefaultHostname is Azure DevOps Services' host.
const DefaultHostname = "dev.azure.com"

// Config configures a Provider.
type Config struct {
	// Hostname is where organizations (collections, on Azure DevOps
	// Server) live: "dev.azure.com" (the default), an Azure DevOps Server
	// host with its virtual directory ("tfs.example.com/tfs"), or a full
	// base URL with a scheme ("http://127.0.0.1:8080" for tests). Without a
	// scheme, https is used. An organization's URL is Hostname/ORG.
	Hostname string
	// NotificationURLs are other base URLs (scheme, host, virtual
	// directory) by which an Azure DevOps Server names itself in service
	// hook payloads: its public URL, when Atoll reaches it by another name
	// ("http://tfs01:8080/tfs" in payloads, "https://tfs.example.com/tfs"
	// in Hostname). Payload URLs on them are read as URLs on Hostname;
	// Atoll never calls them.
	NotificationURLs []string
	// Credential authenticates API calls and git: a PAT or a Microsoft
	// Entra ID token source (service principal, managed identity).
	Credential Credential
	// User is the account Atoll posts as (the PAT's owner, or the service
	// principal's display name); comments are parsed for @User mentions.
	User string
	// WebhookUser and WebhookPassword are the basic-auth credentials the
	// service hook subscriptions send. Both must be set for ParseWebhook to
	// accept anything.
	WebhookUser     string
	WebhookPassword string
	HTTPClient      *http.Client // optional
	Logger          *slog.Logger // optional

	// StatusName is the prefix of Atoll's status contexts
	// (--vcs-status-name, "atlantis" when empty): the status policy on
	// NAME/apply does not keep an apply from counting as mergeable.
	StatusName string
}

// Credential is how Atoll authenticates to Azure DevOps. Implementations
// are safe for concurrent use and renew what expires.
type Credential interface {
	// Authorization is the value of the Authorization header for an API
	// call ("Basic …" for a PAT, "Bearer …" for an Entra ID token).
	Authorization(ctx context.Context) (string, error)
	// GitAuth is the user name and password git sends over https. Azure
	// Repos takes a PAT or an Entra ID access token as the password.
	GitAuth(ctx context.Context) (username, password string, err error)
}

package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/atollhq/atoll/vcs/azuredevops"
)

// azureConfig is the Azure DevOps part of Config.
type azureConfig struct {
	AzureHostname string
	// Other URLs an Azure DevOps Server names itself by in payloads.
	AzureNotificationURL string
	AzureUser            string
	AzureToken           string
	AzureWebhookUser     string
	AzureWebhookPassword string
	// A service principal (Microsoft Entra ID client credentials) or a
	// managed identity instead of a PAT.
	AzureTenantID        string
	AzureClientID        string
	AzureClientSecret    string
	AzureManagedIdentity bool
	AzureAuthorityURL    string
	AzureIMDSURL         string
}

// configured reports whether any Azure DevOps credential was given.
func (c *azureConfig) configured() bool {
	return c.AzureToken != "" || c.AzureClientSecret != "" || c.AzureManagedIdentity || c.AzureWebhookPassword != "" || c.AzureWebhookUser != ""
}

func (c *azureConfig) validate() error {
	if !c.configured() {
		if c.AzureNotificationURL != "" {
			return fmt.Errorf("--azuredevops-notification-url needs Azure DevOps credentials (--azuredevops-token, a service principal or --azuredevops-managed-identity)")
		}
		if c.AzureTenantID != "" || c.AzureClientID != "" {
			return fmt.Errorf("--azuredevops-tenant-id and --azuredevops-client-id need --azuredevops-client-secret or --azuredevops-managed-identity")
		}
		return nil
	}
	ways := 0
	for _, set := range []bool{c.AzureToken != "", c.AzureClientSecret != "", c.AzureManagedIdentity} {
		if set {
			ways++
		}
	}
	switch {
	case ways == 0:
		return fmt.Errorf("the --azuredevops-webhook-* flags need credentials for Azure DevOps too: --azuredevops-token, a service principal (--azuredevops-tenant-id, --azuredevops-client-id, --azuredevops-client-secret) or --azuredevops-managed-identity")
	case ways > 1:
		return fmt.Errorf("use one of --azuredevops-token, --azuredevops-client-secret and --azuredevops-managed-identity")
	case c.AzureClientSecret != "" && (c.AzureTenantID == "" || c.AzureClientID == ""):
		return fmt.Errorf("--azuredevops-client-secret needs --azuredevops-tenant-id and --azuredevops-client-id")
	case c.AzureWebhookUser == "" || c.AzureWebhookPassword == "":
		return fmt.Errorf("--azuredevops-webhook-user and --azuredevops-webhook-password are required with Azure DevOps credentials: unauthenticated webhooks are refused")
	}
	return nil
}

// azureCredential is how Atoll authenticates to Azure DevOps.
func (c *azureConfig) azureCredential() azuredevops.Credential {
	switch {
	case c.AzureClientSecret != "":
		return &azuredevops.EntraCredential{TenantID: c.AzureTenantID, ClientID: c.AzureClientID,
			ClientSecret: c.AzureClientSecret, AuthorityURL: c.AzureAuthorityURL}
	case c.AzureManagedIdentity:
		return &azuredevops.ManagedIdentityCredential{ClientID: c.AzureClientID, TenantID: c.AzureTenantID,
			AuthorityURL: c.AzureAuthorityURL, Endpoint: c.AzureIMDSURL}
	default:
		return azuredevops.PAT{User: c.AzureUser, Token: c.AzureToken}
	}
}

// azureProvider builds the Azure DevOps provider.
func (c *azureConfig) azureProvider(log *slog.Logger, statusName string) (*azuredevops.Provider, error) {
	var notify []string
	if c.AzureNotificationURL != "" {
		notify = strings.Split(c.AzureNotificationURL, ",")
	}
	p, err := azuredevops.New(azuredevops.Config{Hostname: c.AzureHostname, NotificationURLs: notify, Credential: c.azureCredential(), User: c.AzureUser,
		WebhookUser: c.AzureWebhookUser, WebhookPassword: c.AzureWebhookPassword, StatusName: statusName, Logger: log})
	if err != nil {
		return nil, err
	}
	// Said once at start-up, so that an operator reading why webhooks
	// naming another host are accepted finds it.
	if urls := p.NotificationURLs(); len(urls) > 0 {
		log.Info("Azure DevOps: service hook payloads may name the server by its notification URL; Atoll reads them as the configured host, the only one it calls",
			"notification_urls", strings.Join(urls, ","), "hostname", p.BaseURL())
	}
	return p, nil
}

// Package azuredevops is the Azure DevOps provider (Services and Server).
// Its Recognizer works unconfigured, so that an Azure DevOps webhook reaching
// a server that does not serve Azure DevOps is refused as "not configured"
// rather than as an unknown request.
package azuredevops

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// Recognizer recognises Azure DevOps service hook deliveries.
type Recognizer struct{}

// Kind reports atoll.VCSAzureDevOps.
func (Recognizer) Kind() string { return atoll.VCSAzureDevOps }

// Recognizes reports whether h looks like an Azure DevOps service hook:
// Azure sends an X-Vss-ActivityId header, and authenticates webhooks with
// basic auth (Authorization), the only scheme its service hooks offer.
func (Recognizer) Recognizes(h http.Header) bool {
	return h.Get("X-Vss-Activityid") != "" || h.Get("Authorization") != ""
}

// WebhookHint names the headers Recognizes looks for.
func (Recognizer) WebhookHint() string { return "an X-Vss-ActivityId or Authorization header" }

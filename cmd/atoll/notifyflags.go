package main

import (
	"fmt"
	"time"

	"github.com/atollhq/atoll/runner/notify"
)

// notifyConfig holds the apply notifications: Atlantis's webhooks list
// (from --webhooks-config, as Atoll has no --config file), --slack-token
// and --webhook-http-headers.
type notifyConfig struct {
	WebhooksConfig     string
	SlackToken         string
	WebhookHTTPHeaders string
	// SlackAPIURL is the base of Slack's Web API (not a flag: tests point
	// it at a fake); "" is notify.DefaultSlackAPIURL.
	SlackAPIURL string
	// NotifyRetryBackoff is the first wait after a failed delivery (not a
	// flag: tests shorten it); 0 is notify.DefaultBackoff.
	NotifyRetryBackoff time.Duration

	webhooks []notify.Webhook
	headers  map[string][]string
}

// validate reads the webhooks file and the headers.
func (c *notifyConfig) validate() error {
	headers, err := notify.ParseHeaders(c.WebhookHTTPHeaders)
	if err != nil {
		return fmt.Errorf("--webhook-http-headers: %w", err)
	}
	c.headers = headers
	if c.WebhooksConfig == "" {
		return nil
	}
	if c.webhooks, err = notify.ReadFile(c.WebhooksConfig); err != nil {
		return fmt.Errorf("--webhooks-config %s: %w", c.WebhooksConfig, err)
	}
	for i, w := range c.webhooks {
		if w.Kind == notify.KindSlack && c.SlackToken == "" {
			return fmt.Errorf("--webhooks-config %s: webhooks[%d].kind: slack needs --slack-token", c.WebhooksConfig, i)
		}
	}
	return nil
}

// outbox is the runner's notification sender; nil without webhooks.
func (c *notifyConfig) outbox() *notify.Outbox {
	if len(c.webhooks) == 0 {
		return nil
	}
	return &notify.Outbox{Backoff: c.NotifyRetryBackoff,
		Sender: &notify.Sender{Webhooks: c.webhooks, Headers: c.headers, SlackToken: c.SlackToken, SlackAPIURL: c.SlackAPIURL}}
}

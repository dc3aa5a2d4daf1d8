package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/drift"
)

// DefaultSlackAPIURL is the base of Slack's Web API.
const DefaultSlackAPIURL = "https://slack.com/api/"

// Timeout bounds one delivery, as Atlantis's 10 s.
const Timeout = 10 * time.Second

// Sender delivers notifications to the webhooks list's destinations.
type Sender struct {
	Webhooks []Webhook
	// Headers are added to every http webhook (--webhook-http-headers).
	Headers map[string][]string
	// SlackToken is the bot token of kind slack (--slack-token).
	SlackToken string
	// SlackAPIURL is the base of Slack's Web API ("" is DefaultSlackAPIURL).
	SlackAPIURL string
	// Client sends; nil is a client with Timeout.
	Client *http.Client
	// Fence stops deliveries once this node's lease deadline has passed
	// (a node of a pair); nil never does (a single node).
	Fence *atoll.Fence
}

// Deliver sends one notification, payload being an ApplyResult's JSON, to
// destination dest of kind kind. Its errors never hold a credential, a
// header value or the destination's URL.
func (s *Sender) Deliver(ctx context.Context, dest int, kind string, payload []byte) error {
	if dest < 0 || dest >= len(s.Webhooks) || s.Webhooks[dest].Kind != kind {
		return fmt.Errorf("webhooks[%d] is no longer a %s destination (the webhooks config changed)", dest, kind)
	}
	// Checked right before sending, against the clock: a node that lost its
	// lease (or was frozen past it) must not notify anyone, the next active
	// node sends what is left.
	ctx, cancelFence, err := s.Fence.Context(ctx, fmt.Sprintf("notify webhooks[%d]", dest))
	if err != nil {
		return err
	}
	defer cancelFence()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	w := s.Webhooks[dest]
	if kind == KindSlack && w.Event == EventDrift {
		var p drift.WebhookPayload
		if err := json.Unmarshal(payload, &p); err != nil {
			return fmt.Errorf("payload: %w", err)
		}
		return s.slackDrift(ctx, w.Channel, p)
	}
	if kind == KindSlack {
		var r ApplyResult
		if err := json.Unmarshal(payload, &r); err != nil {
			return fmt.Errorf("payload: %w", err)
		}
		return s.slack(ctx, w.Channel, r)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(payload))
	if err != nil {
		return errors.New("bad request URL")
	}
	req.Header.Set("Content-Type", "application/json")
	for name, values := range s.Headers {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	resp, err := s.client().Do(req)
	if err != nil {
		return clientError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return fmt.Errorf("answered %d: %s", resp.StatusCode, s.redact(printable(body)))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return nil
}

func (s *Sender) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return &http.Client{Timeout: Timeout}
}

// clientError is err without the URL *url.Error adds: the URL may carry a
// secret (a token in its query).
func clientError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact replaces in msg (a receiver's answer, which may echo what it was
// sent) the header values and the Slack token: an error is stored and
// logged.
func (s *Sender) redact(msg string) string {
	var secrets []string
	for _, values := range s.Headers {
		secrets = append(secrets, values...)
	}
	secrets = append(secrets, s.SlackToken)
	for _, v := range secrets {
		if len(v) >= 4 { // shorter ones would blank out ordinary words
			msg = strings.ReplaceAll(msg, v, "[redacted]")
		}
	}
	return msg
}

// printable is the start of a response body, for an error message.
func printable(b []byte) string {
	s := strings.TrimSpace(string(b))
	if !utf8.ValidString(s) {
		return "(binary body)"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, s)
}

package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/atollhq/atoll/drift"
)

// slackMessage is chat.postMessage's body: Atlantis's attachment (colour,
// "Apply succeeded for <pull|repo>", fields), plus the job's page.
type slackMessage struct {
	Channel     string            `json:"channel"`
	Text        string            `json:"text"`
	Attachments []slackAttachment `json:"attachments"`
}

type slackAttachment struct {
	Color    string       `json:"color"`
	Text     string       `json:"text"`
	Fallback string       `json:"fallback"`
	Fields   []slackField `json:"fields"`
}

type slackField struct {
	Title string `json:"title"`
	Value string `json:"value"`
	Short bool   `json:"short"`
}

// slackEscape escapes what Slack's mrkdwn reads as markup.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func slackText(r ApplyResult) (text, color string) {
	word, color := "succeeded", "good"
	if !r.Success {
		word, color = "failed", "danger"
	}
	pull := slackEscape.Replace(fmt.Sprintf("%s#%d", r.Repo.FullName, r.Pull.Num))
	if r.Pull.URL != "" {
		pull = fmt.Sprintf("<%s|%s>", r.Pull.URL, pull)
	}
	text = fmt.Sprintf("Apply %s for %s by %s", word, pull, slackEscape.Replace(r.User.Username))
	if r.JobURL != "" {
		text += fmt.Sprintf(" (<%s|job log>)", r.JobURL)
	}
	return text, color
}

// slackDrift posts a drift check's results: Atlantis's attachment (its
// color, text and four fields).
func (s *Sender) slackDrift(ctx context.Context, channel string, p drift.WebhookPayload) error {
	a := drift.SlackMessage(p)
	fields := make([]slackField, len(a.Fields))
	for i, f := range a.Fields {
		fields[i] = slackField{Title: f.Title, Value: slackEscape.Replace(f.Value), Short: f.Short}
	}
	text := slackEscape.Replace(a.Text)
	return s.postSlack(ctx, slackMessage{Channel: channel, Text: text,
		Attachments: []slackAttachment{{Color: a.Color, Text: text, Fallback: text, Fields: fields}}})
}

func (s *Sender) slack(ctx context.Context, channel string, r ApplyResult) error {
	text, color := slackText(r)
	dir := r.Directory
	if dir == "." {
		dir = "/" // as Atlantis: "." reads oddly
	}
	fields := []slackField{
		{Title: "Workspace", Value: r.Workspace, Short: true},
		{Title: "Branch", Value: r.Pull.HeadBranch, Short: true},
		{Title: "User", Value: r.User.Username, Short: true},
		{Title: "Directory", Value: dir, Short: true},
	}
	if r.ProjectName != "" {
		fields = append(fields, slackField{Title: "Project", Value: r.ProjectName, Short: true})
	}
	return s.postSlack(ctx, slackMessage{Channel: channel, Text: text,
		Attachments: []slackAttachment{{Color: color, Text: text, Fallback: text, Fields: fields}}})
}

// postSlack sends msg with chat.postMessage.
func (s *Sender) postSlack(ctx context.Context, msg slackMessage) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	base := s.SlackAPIURL
	if base == "" {
		base = DefaultSlackAPIURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/chat.postMessage", bytes.NewReader(body))
	if err != nil {
		return errors.New("bad Slack API URL")
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+s.SlackToken)
	resp, err := s.client().Do(req)
	if err != nil {
		return clientError(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("slack answered %d: %s", resp.StatusCode, s.redact(printable(b[:min(len(b), 256)])))
	}
	// Slack answers 200 to a refused message, with ok false.
	var answer struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(b, &answer); err != nil {
		return fmt.Errorf("slack answered 200 without its JSON: %s", s.redact(printable(b[:min(len(b), 256)])))
	}
	if !answer.OK {
		return fmt.Errorf("slack refused the message: %s", s.redact(printable([]byte(answer.Error))))
	}
	return nil
}

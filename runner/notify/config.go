// Package notify tells other systems about applies, as Atlantis's
// webhooks: an HTTP POST of the apply's result as JSON, or a Slack message.
// Notifications go through the store's outbox (atoll.Notification), written
// with the apply's final state, and are delivered by the active node.
package notify

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"

	"gopkg.in/yaml.v3"
)

// Kinds and events of Atlantis's webhooks list.
const (
	KindHTTP   = "http"
	KindSlack  = "slack"
	EventApply = "apply"
	// EventDrift sends each drift check's results with no failed project
	// (Atlantis's drift webhooks; its regex filters do not apply).
	EventDrift = "drift"
)

// Webhook is one entry of the webhooks list: where an apply's result goes,
// and for which applies.
type Webhook struct {
	Event          string
	Kind           string
	URL            string // kind http
	Channel        string // kind slack
	WorkspaceRegex string
	BranchRegex    string

	workspace, branch *regexp.Regexp
}

// Matches reports whether an apply of workspace on a pull request into
// baseBranch goes to w. Atlantis matches the base branch, not the head.
func (w Webhook) Matches(workspace, baseBranch string) bool {
	return (w.workspace == nil || w.workspace.MatchString(workspace)) && (w.branch == nil || w.branch.MatchString(baseBranch))
}

// ReadFile reads the webhooks list of a YAML or JSON file (see Parse).
func ReadFile(path string) ([]Webhook, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// entryKeys are the keys an entry may have, Atlantis's.
var entryKeys = map[string]bool{"event": true, "kind": true, "url": true, "channel": true, "workspace-regex": true, "branch-regex": true}

// Parse reads the top-level webhooks: list of a YAML (or JSON) document.
// Every other top-level key is ignored, so that an Atlantis --config file
// can be given unchanged. Errors name the entry and the key.
func Parse(data []byte) ([]Webhook, error) {
	var doc struct {
		Webhooks []yaml.Node `yaml:"webhooks"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a YAML or JSON document with a webhooks list: %w", err)
	}
	if len(doc.Webhooks) == 0 {
		return nil, fmt.Errorf("no webhooks: the file has no top-level webhooks list, or it is empty")
	}
	out := make([]Webhook, 0, len(doc.Webhooks))
	for i, node := range doc.Webhooks {
		var m map[string]string
		if err := node.Decode(&m); err != nil {
			return nil, fmt.Errorf("webhooks[%d]: an entry is a map of string keys to string values: %w", i, err)
		}
		w, err := entry(i, m)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

func entry(i int, m map[string]string) (Webhook, error) {
	var unknown []string
	for k := range m {
		if !entryKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Webhook{}, fmt.Errorf("webhooks[%d].%s: unknown key (known: event, kind, url, channel, workspace-regex, branch-regex)", i, unknown[0])
	}
	w := Webhook{Event: m["event"], Kind: m["kind"], URL: m["url"], Channel: m["channel"], WorkspaceRegex: m["workspace-regex"], BranchRegex: m["branch-regex"]}
	switch w.Event {
	case EventApply, EventDrift:
	case "":
		return w, fmt.Errorf("webhooks[%d].event: required (apply or drift)", i)
	default:
		return w, fmt.Errorf("webhooks[%d].event: %q is not supported: apply or drift", i, w.Event)
	}
	switch w.Kind {
	case KindHTTP:
		if w.URL == "" {
			return w, fmt.Errorf("webhooks[%d].url: required with kind http", i)
		}
		if err := checkURL(w.URL); err != nil {
			return w, fmt.Errorf("webhooks[%d].url: %w", i, err)
		}
	case KindSlack:
		if w.Channel == "" {
			return w, fmt.Errorf("webhooks[%d].channel: required with kind slack", i)
		}
	case "":
		return w, fmt.Errorf("webhooks[%d].kind: required (http or slack)", i)
	default:
		return w, fmt.Errorf("webhooks[%d].kind: %q is not supported: http or slack", i, w.Kind)
	}
	if w.Event == EventDrift {
		// As Atlantis: drift results go to every drift webhook, and its
		// regexes are not read.
		return w, nil
	}
	var err error
	if w.WorkspaceRegex != "" {
		if w.workspace, err = regexp.Compile(w.WorkspaceRegex); err != nil {
			return w, fmt.Errorf("webhooks[%d].workspace-regex: %w", i, err)
		}
	}
	if w.BranchRegex != "" {
		if w.branch, err = regexp.Compile(w.BranchRegex); err != nil {
			return w, fmt.Errorf("webhooks[%d].branch-regex: %w", i, err)
		}
	}
	return w, nil
}

// ParseHeaders reads --webhook-http-headers, Atlantis's format: a JSON
// object whose values are a string or an array of strings. Values are
// secrets (tokens): errors never quote them.
func ParseHeaders(s string) (map[string][]string, error) {
	if s == "" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("not a JSON object of header names to a string or an array of strings")
	}
	headers := make(map[string][]string, len(m))
	for name, v := range m {
		switch v := v.(type) {
		case string:
			headers[name] = []string{v}
		case []any:
			for _, e := range v {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("header %q: an array element is a %s, not a string", name, jsonType(e))
				}
				headers[name] = append(headers[name], s)
			}
		default:
			return nil, fmt.Errorf("header %q: the value is a %s, not a string or an array of strings", name, jsonType(v))
		}
	}
	return headers, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "string"
}

package azuredevops

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll/vcs"
)

// What Atoll answers a service hook delivery, and why.
//
// Azure DevOps reads the answer's status only. A 2xx is a success. 410
// disables the subscription at once; 408, 502, 503 and 504 are retried a
// few times; any other failure (400, 401, 403, 404, 500...) is an
// "enduring" failure: the subscription is put on probation, its deliveries
// are delayed more and more, and repeated failures disable it. A subscription
// is one event type for a whole project (or a repository), so a 4xx for one
// delivery Atoll has nothing to do with delays, then stops, all the others.
//
// Hence the rule:
//   - 401, wrong or missing basic auth: a delivery that is not known to
//     come from Azure DevOps is refused, whatever it holds. This is what the
//     Test button shows when the credentials are wrong, which is its use.
//   - 2xx and nothing recorded, with the reason logged once per hour
//     (ignore): an authenticated delivery Atoll has nothing to do with,
//     however incomplete the rest of it is: the Test button's sample,
//     comments that are deleted, edited, empty or Azure's own, pull request
//     updates that touch no code, "merge attempted" on an active pull
//     request, event types Atoll does not subscribe to. Refusing those
//     would only put the subscription on probation.
//   - 400: an authenticated delivery that asks for work (a pull request
//     opened, updated or closed, a new comment) but cannot be read, or names
//     a host Atoll is not configured for. Answering 2xx would lose the work
//     silently; the failure, with its reason, shows in the subscription's
//     history in Azure DevOps, and the reason names the field or flag.

// ignoreEvery is how often one reason for ignoring deliveries is logged:
// once is enough to explain a subscription's traffic, and an hour keeps it
// in recent logs without flooding them (every vote is an update).
const ignoreEvery = time.Hour

// ignoreLog rate-limits the log lines of ignored deliveries per reason. Its
// zero value is ready.
type ignoreLog struct {
	mu   sync.Mutex
	last map[string]time.Time
	skip map[string]int // deliveries ignored since the last line
}

// allow reports whether reason may be logged at now, and how many
// deliveries were ignored for it without a line since the last one.
func (l *ignoreLog) allow(reason string, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.skip = map[string]time.Time{}, map[string]int{}
	}
	if last, ok := l.last[reason]; ok && now.Sub(last) < ignoreEvery {
		l.skip[reason]++
		return false, 0
	}
	n := l.skip[reason]
	l.last[reason], l.skip[reason] = now, 0
	return true, n
}

// ignore answers a delivery Atoll has nothing to do with: (nil, nil), which
// the server answers 200 without recording anything. reason is a fixed
// sentence (it is also the key of the rate limit).
func (p *Provider) ignore(env *hookEnvelope, reason string) (*vcs.Event, error) {
	if ok, n := p.ignores.allow(reason, time.Now()); ok {
		p.log.Info("Azure DevOps webhook ignored (logged once an hour per reason)", "reason", reason,
			"event_type", env.EventType, "delivery", env.ID, "ignored_since_last", n)
	}
	return nil, nil
}

// sampleRepositoryID is the repository of Microsoft's sample events, the
// ones in the service hook documentation: the Fabrikam organization's
// repository "Fabrikam". The Test button of a subscription (and the test
// notifications API, unless told to use real data) sends that sample for
// the subscription's event type, on Azure DevOps Services and Server alike,
// whatever the organization or collection. Atlantis recognises it by the
// same repository.
const sampleRepositoryID = "4bc14d40-c903-45e2-872e-0462c7748079"

// hookSampleProbe holds the URLs of a resource that name its repository,
// for every event type Atoll reads.
type hookSampleProbe struct {
	Repository  *hookRepository `json:"repository"` // pull request events
	PullRequest *struct {
		Repository *hookRepository `json:"repository"`
	} `json:"pullRequest"` // comment events, 2.0
	Comment *hookComment `json:"comment"` // comment events, 2.0
	Links   struct {
		Self hookLink `json:"self"`
	} `json:"_links"` // comment events, 1.0: the comment's link
}

// isSample reports whether env is Microsoft's sample event: one of its
// repository URLs addresses the sample repository in the fabrikam
// organization (fabrikam.visualstudio.com or dev.azure.com/fabrikam). It is
// checked before the host, which the sample never matches on a Server.
func isSample(env *hookEnvelope) bool {
	var r hookSampleProbe
	if json.Unmarshal(env.Resource, &r) != nil {
		return false
	}
	urls := []string{r.Links.Self.Href}
	if r.Repository != nil {
		urls = append(urls, r.Repository.URL)
	}
	if r.PullRequest != nil && r.PullRequest.Repository != nil {
		urls = append(urls, r.PullRequest.Repository.URL)
	}
	if r.Comment != nil {
		urls = append(urls, r.Comment.Links.Self.Href)
	}
	return slices.ContainsFunc(urls, sampleURL)
}

func sampleURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return false
	}
	host, segs := strings.ToLower(u.Hostname()), pathSegments(u)
	fabrikam := host == "fabrikam"+legacyDomain ||
		(host == DefaultHostname && len(segs) > 0 && strings.EqualFold(segs[0], "fabrikam"))
	return fabrikam && slices.ContainsFunc(segs, func(s string) bool { return strings.EqualFold(s, sampleRepositoryID) })
}

package github

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll"
	"github.com/google/go-github/v88/github"
)

// userTeamsQuery lists the organization's teams login is a direct member
// of, each with its ancestors: a member of a child team is a member of its
// parents for --gh-team-allowlist, as in Atlantis. Only GraphQL filters
// teams by member; REST would list every team's members.
const userTeamsQuery = `query($org: String!, $login: String!, $cursor: String) {
  organization(login: $org) {
    teams(first: 100, after: $cursor, userLogins: [$login]) {
      nodes { slug ancestors(first: 100) { nodes { slug } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`

// teamsTTL is how long a user's teams are reused: long enough that a
// burst of comments costs one query, short enough that removing someone
// from a team takes effect within a minute.
const teamsTTL = time.Minute

type teamsEntry struct {
	teams   []string
	expires time.Time
}

// teamCache holds recent UserTeams answers by org/login (lowercased).
type teamCache struct {
	mu      sync.Mutex
	entries map[string]teamsEntry
}

func (c *teamCache) get(key string, now time.Time) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || now.After(e.expires) {
		return nil, false
	}
	return slices.Clone(e.teams), true
}

func (c *teamCache) put(key string, teams []string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]teamsEntry{}
	}
	for k, e := range c.entries { // few users comment; keep the map small anyway
		if now.After(e.expires) {
			delete(c.entries, k)
		}
	}
	c.entries[key] = teamsEntry{teams: slices.Clone(teams), expires: now.Add(teamsTTL)}
}

// UserTeams returns the slugs of the teams of repo's organization that
// login belongs to, directly or through a child team, sorted. A
// repository owned by a user, not an organization, has no teams. The
// token needs read:org; a GitHub App, the Members (read) organization
// permission.
func (p *Provider) UserTeams(ctx context.Context, repo atoll.Repo, login string) ([]string, error) {
	key := strings.ToLower(repo.Owner + "/" + login)
	if teams, ok := p.teams.get(key, time.Now()); ok {
		return teams, nil
	}
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return nil, err
	}
	teams, err := p.queryUserTeams(ctx, gh, repo.Owner, login)
	if err != nil {
		return nil, err
	}
	p.teams.put(key, teams, time.Now())
	return teams, nil
}

func (p *Provider) queryUserTeams(ctx context.Context, gh *github.Client, org, login string) ([]string, error) {
	type slugs struct {
		Nodes []struct {
			Slug string `json:"slug"`
		} `json:"nodes"`
	}
	var data struct {
		Organization *struct {
			Teams struct {
				Nodes []struct {
					Slug      string `json:"slug"`
					Ancestors slugs  `json:"ancestors"`
				} `json:"nodes"`
				PageInfo struct {
					HasNextPage bool   `json:"hasNextPage"`
					EndCursor   string `json:"endCursor"`
				} `json:"pageInfo"`
			} `json:"teams"`
		} `json:"organization"`
	}
	seen := map[string]bool{}
	vars := map[string]any{"org": org, "login": login, "cursor": nil}
	for {
		data.Organization = nil
		gqlErrs, err := p.graphqlQuery(ctx, gh, userTeamsQuery, vars, &data)
		if err != nil {
			return nil, apiError(err, "list teams of %s in %s", login, org)
		}
		if len(gqlErrs) > 0 {
			if gqlErrs[0].Type == "NOT_FOUND" && data.Organization == nil {
				return []string{}, nil // a user's repository: no teams
			}
			return nil, apiError(graphqlErrors(gqlErrs), "list teams of %s in %s", login, org)
		}
		if data.Organization == nil {
			return []string{}, nil
		}
		for _, t := range data.Organization.Teams.Nodes {
			seen[strings.ToLower(t.Slug)] = true
			for _, a := range t.Ancestors.Nodes {
				seen[strings.ToLower(a.Slug)] = true
			}
		}
		if !data.Organization.Teams.PageInfo.HasNextPage {
			break
		}
		vars["cursor"] = data.Organization.Teams.PageInfo.EndCursor
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

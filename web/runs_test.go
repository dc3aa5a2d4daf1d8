package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// addJobs adds n finished jobs to pull (a key of f.pulls) for the project
// of dir, by user; each log line is "job N: text". It returns their ids.
func (f *historyFixture) addJobs(t *testing.T, pull, dir, user, kind string, n int, lines ...string) []int64 {
	t.Helper()
	var ids []int64
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		ids = ids[:0]
		p, err := f.db.PullByNumber(context.Background(), strings.Split(pull, "#")[0], atoiT(strings.Split(pull, "#")[1]))
		if err != nil {
			return err
		}
		project, err := tx.UpsertProject(p.RepoID, atoll.Project{Dir: dir, Workspace: "default"})
		if err != nil {
			return err
		}
		for range n {
			j := &atoll.Job{Kind: kind, PullID: p.ID, ProjectID: project, HeadSHA: "abc", User: user}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			if err := tx.StartJob(j.ID); err != nil {
				return err
			}
			ll := make([]atoll.LogLine, len(lines))
			for i, text := range lines {
				ll[i] = atoll.LogLine{JobID: j.ID, Seq: int64(i + 1), Stream: atoll.StreamStdout, Time: tx.Now(), Text: text}
			}
			if err := tx.AppendLogs(ll); err != nil {
				return err
			}
			if err := tx.FinishJob(j.ID, atoll.JobSucceeded, "", nil); err != nil {
				return err
			}
			ids = append(ids, j.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func atoiT(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

var jobLink = regexp.MustCompile(`<td><a href="/jobs/(\d+)">#`)

// jobsShown is the job ids of a runs page's table, in order.
func jobsShown(body string) []int64 {
	var out []int64
	for _, m := range jobLink.FindAllStringSubmatch(body, -1) {
		out = append(out, int64(atoiT(m[1])))
	}
	return out
}

var olderLink = regexp.MustCompile(`<a href="([^"]+)" rel="next">Older`)

func TestRunsPagePagesAndFilters(t *testing.T) {
	f := newHistoryFixture(t)
	a := f.addJobs(t, "acme/infra#7", "staging", "alice", atoll.JobPlan, 60, "plan output")
	b := f.addJobs(t, "acme/apps#3", "web", "bob", atoll.JobApply, 5, "apply output")
	var all []int64
	all = append(all, a...)
	all = append(all, b...)
	slices.Reverse(all)

	// Every job once, 50 a page, through the Older links.
	var seen []int64
	next := "/runs"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		rec := f.do(t, vera, http.MethodGet, next, "", "")
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", next, rec.Code)
		}
		body := rec.Body.String()
		seen = append(seen, jobsShown(body)...)
		next = ""
		if m := olderLink.FindStringSubmatch(body); m != nil {
			next = strings.ReplaceAll(m[1], "&amp;", "&")
			if !strings.Contains(next, "before=") {
				t.Errorf("older link %q has no cursor", next)
			}
		}
		if pages > 0 && !strings.Contains(body, `rel="prev">← Newer`) {
			t.Errorf("page %d has no Newer link", pages+1)
		}
	}
	if !slices.Equal(seen, all) {
		t.Errorf("pages showed %v\nwant %v", seen, all)
	}
	cases := []struct {
		query string
		want  []int64
	}{
		{"?repo=acme/apps", reversed(b)},
		{"?repo=acme/infra&pull=7&limit=3", reversed(a)[:3]},
		{"?project=web", reversed(b)},
		{"?kind=apply", reversed(b)},
		{"?user=bob&state=succeeded", reversed(b)},
		{"?state=failed", nil},
		{"?from=2026-11-22&to=2026-11-22", all[:50]},
		{"?to=2026-11-21", nil},
		{"?repo=acme/apps&before=" + fmt.Sprint(b[2]), []int64{b[1], b[0]}},
		{"?repo=acme/apps&after=" + fmt.Sprint(b[2]), []int64{b[4], b[3]}},
	}
	for _, c := range cases {
		rec := f.do(t, vera, http.MethodGet, "/runs"+c.query, "", "")
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d", c.query, rec.Code)
			continue
		}
		if got := jobsShown(rec.Body.String()); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.query, got, c.want)
		}
	}
	for _, q := range []string{"?from=22/11/2026", "?kind=destroy", "?state=weird", "?pull=-1", "?before=x", "?before=3&after=1", "?repo=noslash"} {
		rec := f.do(t, vera, http.MethodGet, "/runs"+q, "", "")
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `class="flash"`) {
			t.Errorf("%s: %d, want 400 with the reason on the page", q, rec.Code)
		}
	}
	// Times say their zone on hover.
	body := f.do(t, vera, http.MethodGet, "/runs", "", "").Body.String()
	if !regexp.MustCompile(`<time datetime="2026-11-22T12:00:00Z" title="Sun 22 Nov 2026 12:00:00 UTC">just now</time>`).MatchString(body) {
		t.Errorf("no time with its zone on hover")
	}
	if !strings.Contains(body, "Dates are whole days in UTC") {
		t.Error("the page does not say dates are UTC")
	}
}

func reversed(s []int64) []int64 {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func TestRunsPageSearch(t *testing.T) {
	f := newHistoryFixture(t)
	hit := f.addJobs(t, "acme/infra#7", "staging", "alice", atoll.JobPlan, 1,
		"Initializing...", `Error: creating S3 Bucket <script>alert(1)</script>: BucketAlreadyExists`, "done")[0]
	f.addJobs(t, "acme/infra#7", "staging", "alice", atoll.JobPlan, 2, "No changes.")
	rec := f.do(t, vera, http.MethodGet, "/runs?q=bucketalreadyexists", "", "")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("%d: %s", rec.Code, body)
	}
	for _, want := range []string{
		fmt.Sprintf(`href="/jobs/%d#L2"`, hit),
		`<mark>BucketAlreadyExists</mark>`,
		`&lt;script&gt;alert(1)&lt;/script&gt;`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("search page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("a log line's HTML reached the page unescaped")
	}
	if n := strings.Count(body, `class="card hit"`); n != 1 {
		t.Errorf("%d hits, want 1", n)
	}
	// The search's filters narrow it.
	if body := f.do(t, vera, http.MethodGet, "/runs?q=bucket&user=bob", "", "").Body.String(); strings.Contains(body, `class="card hit"`) {
		t.Error("user=bob still shows alice's job")
	}
	// Bad syntax is explained, not a 500.
	rec = f.do(t, vera, http.MethodGet, `/runs?q=%22unbalanced`, "", "")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "unbalanced double quote") {
		t.Errorf("unbalanced quote: %d", rec.Code)
	}
	// What FTS5 would read as syntax is plain text.
	for _, q := range []string{"NOT bucket", "bucket OR x", "a:b", "(x", "*"} {
		rec := f.do(t, vera, http.MethodGet, "/runs?q="+urlQuery(q), "", "")
		if rec.Code >= 500 {
			t.Errorf("%q: %d", q, rec.Code)
		}
	}

	// The JSON API.
	rec = f.do(t, vera, http.MethodGet, "/api/v1/search?q=bucket", "", "")
	var res struct {
		Hits []struct {
			Job   atoll.Job       `json:"job"`
			Lines []atoll.LogLine `json:"lines"`
		} `json:"hits"`
		NextBefore int64 `json:"next_before"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %v: %s", rec.Code, err, rec.Body)
	}
	if len(res.Hits) != 1 || res.Hits[0].Job.ID != hit || len(res.Hits[0].Lines) != 1 || res.Hits[0].Lines[0].Seq != 2 || res.NextBefore != 0 {
		t.Errorf("search API: %+v", res)
	}
	rec = f.do(t, vera, http.MethodGet, "/api/v1/search?q=%22x", "", "")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "unbalanced") {
		t.Errorf("search API, bad syntax: %d %s", rec.Code, rec.Body)
	}
}

func urlQuery(s string) string {
	r := strings.NewReplacer(" ", "+", ":", "%3A", "(", "%28", "*", "%2A")
	return r.Replace(s)
}

// GET /api/v1/jobs keeps its array and gains the filters and a Link header
// with the cursors.
func TestJobsAPIPages(t *testing.T) {
	f := newHistoryFixture(t)
	ids := f.addJobs(t, "acme/infra#7", "staging", "alice", atoll.JobPlan, 5, "x")
	rec := f.do(t, vera, http.MethodGet, "/api/v1/jobs?repo=acme/infra&user=alice&limit=2", "", "")
	var jobs []atoll.Job
	if err := json.Unmarshal(rec.Body.Bytes(), &jobs); err != nil || len(jobs) != 2 || jobs[0].ID != ids[4] {
		t.Fatalf("%d %v %+v", rec.Code, err, jobs)
	}
	want := fmt.Sprintf(`</api/v1/jobs?before=%d&limit=2&repo=acme%%2Finfra&user=alice>; rel="next"`, ids[3])
	if got := rec.Header().Values("Link"); !slices.Equal(got, []string{want}) {
		t.Errorf("Link %q, want %q", got, want)
	}
	rec = f.do(t, vera, http.MethodGet, fmt.Sprintf("/api/v1/jobs?before=%d&limit=2", ids[1]), "", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &jobs); err != nil || len(jobs) != 1 || jobs[0].ID != ids[0] {
		t.Fatalf("last page: %+v", jobs)
	}
	if links := strings.Join(rec.Header().Values("Link"), " "); !strings.Contains(links, `rel="prev"`) || strings.Contains(links, `rel="next"`) {
		t.Errorf("last page links: %q", links)
	}
	if rec := f.do(t, vera, http.MethodGet, "/api/v1/jobs?from=yesterday", "", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("bad date: %d", rec.Code)
	}
}

package main_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/replica/s3test"
)

// BenchmarkWebhookToPlanComment measures one pull request at a time: from
// sending the "opened" webhook to the plan comment arriving at GitHub, with
// a real git server, real Terraform and a durable SQLite commit.
func BenchmarkWebhookToPlanComment(b *testing.B) {
	testEnv(b)
	files := map[string]string{}
	for i := 0; i < b.N; i++ {
		files[fmt.Sprintf("p%d/main.tf", i)] = tfProject("p", 1)
	}
	repo := newGitRepo(b, files)
	base := repo.git("rev-parse", "main")
	refs, shas, changed := make([]string, b.N), make([]string, b.N), make([]string, b.N)
	for i := range shas {
		refs[i], changed[i] = fmt.Sprintf("b%d", i), fmt.Sprintf("p%d/main.tf", i)
		shas[i] = repo.branch(refs[i], map[string]string{changed[i]: tfProject("p", 2)})
	}
	_, lat := openOneByOne(b, repo, base, refs, shas, changed)
	report(b, "comment", lat)
}

// openOneByOne serves repo and opens pull request i+1 from branch refs[i]
// (head shas[i], changing file changed[i]), each once the one before has
// its comment. It returns the fake GitHub and, per pull request, the time
// from sending its "opened" webhook to its first comment.
func openOneByOne(b *testing.B, repo *gitRepo, base string, refs, shas, changed []string) (*fakeGitHub, []time.Duration) {
	cloneURL, _ := serveGit(b, repo, "gh-test-token")
	gh := newFakeGitHub(b)
	m := startBenchMain(b, gh, "")
	lat := make([]time.Duration, len(refs))
	b.ResetTimer()
	for i := range refs {
		n := i + 1
		gh.setPull(n, fakePull{HeadSHA: shas[i], HeadRef: refs[i], BaseSHA: base, BaseRef: "main", Files: []string{changed[i]}})
		start := time.Now()
		webhook(b, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, n, "opened", refs[i], shas[i], base))
		for len(gh.pullComments(n)) == 0 {
			time.Sleep(time.Millisecond)
		}
		lat[i] = time.Since(start)
	}
	b.StopTimer()
	return gh, lat
}

// BenchmarkNewHeadToPlanComment is the shape of the outside measurement
// against Atlantis: one pull request gets a new head after another, each
// changing the project's .tf files, so every plan re-checks out the commit
// and must run terraform init again (the fingerprint changed) before plan
// and show. Latency is from the "synchronize" webhook to the plan comment.
func BenchmarkNewHeadToPlanComment(b *testing.B) {
	testEnv(b)
	repo := newGitRepo(b, map[string]string{"app/main.tf": tfProject("app", 1)})
	base := repo.git("rev-parse", "main")
	repo.git("checkout", "--quiet", "-B", "feature", "main")
	shas := make([]string, b.N+1)
	for i := range shas {
		shas[i] = repo.commit(fmt.Sprintf("head %d", i), map[string]string{"app/main.tf": tfProject("app", i+2)})
	}
	repo.git("checkout", "--quiet", "main")
	cloneURL, _ := serveGit(b, repo, "gh-test-token")
	gh := newFakeGitHub(b)
	m := startBenchMain(b, gh, "")
	push := func(i int, action string) {
		gh.setPull(1, fakePull{HeadSHA: shas[i], HeadRef: "feature", BaseSHA: base, BaseRef: "main", Files: []string{"app/main.tf"}})
		webhook(b, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, 1, action, "feature", shas[i], base))
		for len(gh.pullComments(1)) < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	push(0, "opened") // the first init also fills the pool; not measured
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		push(i+1, "synchronize")
		lat[i] = time.Since(start)
	}
	b.StopTimer()
	for i, c := range gh.pullComments(1) {
		if want := fmt.Sprintf("Plan: %d to add", i+2); !contains(c, want) {
			b.Fatalf("comment %d lacks %q:\n%s", i+1, want, c)
		}
	}
	report(b, "comment", lat)
}

// BenchmarkNewPullToPlanComment is the shape of the outside measurement
// against Atlantis (webhook to first plan comment for a new pull request):
// pull requests opened one after another, each new and each adding a
// project never planned before, so every plan runs terraform init, plan
// and (before or after the comment) show. Latency is from the "opened"
// webhook to the plan comment.
func BenchmarkNewPullToPlanComment(b *testing.B) {
	testEnv(b)
	repo := newGitRepo(b, map[string]string{"README.md": "projects arrive with their pull requests\n"})
	base := repo.git("rev-parse", "main")
	refs, shas, changed := make([]string, b.N), make([]string, b.N), make([]string, b.N)
	for i := range shas {
		refs[i] = fmt.Sprintf("new%d", i)
		changed[i] = refs[i] + "/main.tf"
		shas[i] = repo.branch(refs[i], map[string]string{changed[i]: tfProject("new", i%3+1)})
	}
	gh, lat := openOneByOne(b, repo, base, refs, shas, changed)
	for i := range refs {
		if c, want := gh.pullComments(i + 1)[0], fmt.Sprintf("Plan: %d to add", i%3+1); !contains(c, want) {
			b.Fatalf("pull %d's comment lacks %q:\n%s", i+1, want, c)
		}
	}
	report(b, "comment", lat)
}

// BenchmarkWebhookBurst sends 100 "opened" webhooks at once and measures
// the webhook responses and the time until each pull request has its first
// comment. In "one-project" every pull request changes the same project, as
// in the Atlantis measurement we compare with: one plans, the others are
// told who holds the lock. In "own-project" each changes its own project of
// a 100-project repository, so all 100 plan.
func BenchmarkWebhookBurst(b *testing.B) {
	for _, workDir := range []string{"data-disk", "tmpfs"} {
		b.Run("one-project/workdir="+workDir, func(b *testing.B) { burst(b, 1, workDir == "tmpfs", nil) })
		b.Run("own-project/workdir="+workDir, func(b *testing.B) { burst(b, 100, workDir == "tmpfs", nil) })
	}
}

// BenchmarkWebhookBurstReplicated is the one-project burst with and without
// replication: with it, every webhook's commit is in the replica (an
// in-process S3 server) before the webhook is answered.
func BenchmarkWebhookBurstReplicated(b *testing.B) {
	b.Run("replica=off", func(b *testing.B) { burst(b, 1, false, nil) })
	b.Run("replica=s3", func(b *testing.B) {
		s3 := s3test.New(b)
		burst(b, 1, false, func(c *main.Config) {
			c.ReplicaURL, c.NodeID, c.LeaseTTL = s3.URL(fmt.Sprintf("bench-%d", time.Now().UnixNano())), "bench", 5*time.Second
			c.ReplicaAccessKeyID, c.ReplicaSecretAccessKey = s3test.AccessKeyID, s3test.SecretAccessKey
		})
	})
}

// tmpfsDir is a directory on /dev/shm (tmpfs), removed after the test.
func tmpfsDir(b testing.TB) string {
	dir, err := os.MkdirTemp("/dev/shm", "atoll-bench-")
	if err != nil {
		b.Skipf("no tmpfs: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func burst(b *testing.B, projects int, tmpfs bool, configure func(*main.Config)) {
	const pulls = 100
	testEnv(b)
	for iter := 0; iter < b.N; iter++ {
		repo, base, gh, shas := manyPulls(b, pulls, projects)
		cloneURL, _ := serveGit(b, repo, "gh-test-token")
		workDir := ""
		if tmpfs {
			workDir = tmpfsDir(b)
		}
		m := startBenchMain(b, gh, workDir, configure)
		bodies := make([][]byte, pulls)
		for i := range bodies {
			bodies[i] = webhookBody(b, "pull_request.opened.json", pullEvent(cloneURL, i+1, "opened", fmt.Sprintf("b%d", i), shas[i], base))
		}
		respTimes := make([]time.Duration, pulls)
		commentTimes := make([]time.Duration, pulls)
		var wg sync.WaitGroup
		start := time.Now()
		b.StartTimer()
		for i := 0; i < pulls; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				resp := postWebhook(b, m.URL, "pull_request", bodies[i], sign(bodies[i], webhookSecret))
				respTimes[i] = time.Since(t0)
				if resp.StatusCode != http.StatusOK {
					b.Errorf("webhook %d: status %d", i, resp.StatusCode)
				}
			}()
		}
		wg.Wait()
		done := 0
		for done < pulls {
			done = 0
			for i := 0; i < pulls; i++ {
				if commentTimes[i] == 0 && len(gh.pullComments(i+1)) > 0 {
					commentTimes[i] = time.Since(start)
				}
				if commentTimes[i] != 0 {
					done++
				}
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("only %d of %d pull requests commented", done, pulls)
			}
			time.Sleep(2 * time.Millisecond)
		}
		b.StopTimer()
		plans, locked := 0, 0
		for i := 0; i < pulls; i++ {
			switch c := gh.pullComments(i + 1)[0]; {
			case contains(c, "Plan: 2 to add"):
				plans++
			case contains(c, "currently locked"):
				locked++
			default:
				b.Fatalf("pull %d comment is neither a plan nor a lock conflict:\n%s", i+1, c)
			}
		}
		if plans != projects || locked != pulls-projects {
			b.Fatalf("%d plans and %d lock conflicts; want %d and %d", plans, locked, projects, pulls-projects)
		}
		report(b, "webhook", respTimes)
		report(b, "comment", commentTimes)
		m.Close()
	}
}

func startBenchMain(b testing.TB, gh *fakeGitHub, workDir string, configure ...func(*main.Config)) *main.Main {
	m := startMain(b, b.TempDir(), func(c *main.Config) {
		for _, f := range configure {
			if f != nil {
				f(c)
			}
		}
		c.WorkDir = workDir
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		c.Parallelism = 4
		c.LogLevel = "error"
		if l := os.Getenv("ATOLL_BENCH_LOG"); l != "" {
			c.LogLevel = l
		}
	})
	b.Cleanup(func() { m.Close() })
	if m.Node != nil {
		// A node of a pair serves once it has promoted itself.
		deadline := time.Now().Add(time.Minute)
		for !m.Node.Status(context.Background()).Ready {
			if time.Now().After(deadline) {
				b.Fatal("the node never became active")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return m
}

func report(b *testing.B, name string, d []time.Duration) {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	pct := func(p float64) float64 { return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.5), name+"-p50-ms")
	b.ReportMetric(pct(0.9), name+"-p90-ms")
	b.ReportMetric(pct(0.99), name+"-p99-ms")
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (len(sub) == 0 || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// manyPulls is a repository of projects p0..p<projects-1> and pulls pull
// requests set up on a fake GitHub, pull i+1 changing project i%projects
// from branch b<i>: their head commits are shas[i].
func manyPulls(b testing.TB, pulls, projects int) (repo *gitRepo, base string, gh *fakeGitHub, shas []string) {
	files := map[string]string{}
	for i := 0; i < projects; i++ {
		files[fmt.Sprintf("p%d/main.tf", i)] = tfProject("p", 1)
	}
	repo = newGitRepo(b, files)
	base = repo.git("rev-parse", "main")
	gh = newFakeGitHub(b)
	shas = make([]string, pulls)
	for i := range shas {
		project := fmt.Sprintf("p%d/main.tf", i%projects)
		shas[i] = repo.branch(fmt.Sprintf("b%d", i), map[string]string{project: tfProject("p", 2)})
		gh.setPull(i+1, fakePull{HeadSHA: shas[i], HeadRef: fmt.Sprintf("b%d", i), BaseSHA: base, BaseRef: "main", Files: []string{project}})
	}
	return repo, base, gh, shas
}

package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/web"
)

const (
	adoHookUser, adoHookPass = "azure-hooks", "hook-password"
	zulipRepo                = "ttchong/test-zulip/test-zulip"
)

// adoServer is a live server serving Azure DevOps on hostname (and
// payloads naming notify), allowing dev.azure.com/ttchong's repositories,
// those of the real deliveries.
func adoServer(t *testing.T, hostname string, notify ...string) *liveServer {
	t.Helper()
	return startLiveServer(t, func(s *web.Server) {
		az, err := azuredevops.New(azuredevops.Config{Hostname: hostname, NotificationURLs: notify,
			Credential: azuredevops.PAT{Token: "pat"}, WebhookUser: adoHookUser, WebhookPassword: adoHookPass, Logger: s.Logger})
		if err != nil {
			t.Fatal(err)
		}
		s.Providers = map[string]vcs.Provider{atoll.VCSAzureDevOps: az}
		runnerOf(s).Allowlist = runner.ParseAllowlist("dev.azure.com/ttchong/*,tfs.example.com/tfs/*")
	})
}

// postADO posts body to /events as a service hook does and returns the
// status and the answer.
func postADO(t *testing.T, s *liveServer, body []byte, pass string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/events", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("X-Vss-ActivityId", "4a4d5a0e-0000-0000-0000-000000000000")
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(adoHookUser+":"+pass)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	json.Unmarshal(b, &out)
	return res.StatusCode, out
}

func readADO(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "vcs", "azuredevops", "testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pullsOf are the pull requests recorded, by number.
func pullsOf(t *testing.T, s *liveServer) map[int]*atoll.Pull {
	t.Helper()
	pulls, err := s.DB.Pulls(context.Background(), atoll.PullFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]*atoll.Pull{}
	for _, p := range pulls {
		out[p.Number] = p
	}
	return out
}

func queuedRequests(t *testing.T, s *liveServer) int {
	t.Helper()
	n, err := s.DB.CountRequests(context.Background(), atoll.RequestQueued)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Deliveries recorded from a real organization (testdata/real, see its
// README), replayed as they are through POST /events: the answer and what
// is recorded, in the order they were sent.
func TestAzureDevOpsRealDeliveries(t *testing.T) {
	s := adoServer(t, "")
	steps := []struct {
		file   string
		queued bool
		check  func(map[int]*atoll.Pull) bool
		want   string
	}{
		{"code_pull_request__opened.json", true, func(p map[int]*atoll.Pull) bool {
			return p[1] != nil && p[1].Repo == zulipRepo && p[1].HeadSHA == "8b913c8e0d0492952bd215da12df9a422182e9c5" && p[1].State == atoll.PullOpen
		}, "pull 1 open at 8b913c8e"},
		{"code_pull_request__updated.json", true, func(p map[int]*atoll.Pull) bool {
			return p[2] != nil && p[2].HeadSHA == "aefa35fb7c4505b9b8337aff3c4be96eddbbd861" && p[2].HeadRef == "stg"
		}, "pull 2 at aefa35fb (a push: autoplan)"},
		// "Merge attempted" on an active pull request: nothing to do.
		{"code_pull_request__merge_attempted.json", false, func(p map[int]*atoll.Pull) bool { return p[4] == nil }, "pull 4 not recorded"},
		{"code_pull_request__merged.json", true, func(p map[int]*atoll.Pull) bool {
			return p[1] != nil && p[1].State == atoll.PullMerged
		}, "pull 1 merged"},
	}
	for _, st := range steps {
		before := queuedRequests(t, s)
		code, out := postADO(t, s, readADO(t, "real", st.file), adoHookPass)
		if code != http.StatusOK || out["queued"] != st.queued {
			t.Fatalf("%s: %d %v; want 200 with queued %v", st.file, code, out, st.queued)
		}
		if after := queuedRequests(t, s); (after > before) != st.queued {
			t.Errorf("%s: queued requests %d -> %d", st.file, before, after)
		}
		if p := pullsOf(t, s); !st.check(p) {
			t.Errorf("%s: recorded %+v; want %s", st.file, p, st.want)
		}
	}
	// Wrong credentials: refused, nothing recorded.
	before := queuedRequests(t, s)
	if code, _ := postADO(t, s, readADO(t, "real", "code_pull_request__updated.json"), "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	if queuedRequests(t, s) != before {
		t.Error("a refused delivery queued a request")
	}
}

// The Test button sends Microsoft's samples (testdata/azuredevops as they
// are): 200 and nothing recorded, on Services (where the sample's
// repository is not allowlisted) and on a Server (whose host the sample
// does not name); the reason is logged once.
func TestAzureDevOpsTestButtonThroughEvents(t *testing.T) {
	for _, host := range []string{"", "https://tfs.example.com/tfs"} {
		s := adoServer(t, host)
		for _, name := range []string{"pullrequest.created.json", "pullrequest.updated.json", "pullrequest.merged.json",
			"pullrequest-comment.v1.json", "pullrequest-comment.v2.json"} {
			code, out := postADO(t, s, readADO(t, "azuredevops", name), adoHookPass)
			if code != http.StatusOK || out["queued"] != false {
				t.Errorf("%q, %s: %d %v; want 200, not queued", host, name, code, out)
			}
		}
		if p := pullsOf(t, s); len(p) != 0 || queuedRequests(t, s) != 0 {
			t.Errorf("%q: recorded %v", host, p)
		}
		if recs := s.logs.records(t, "Azure DevOps webhook ignored (logged once an hour per reason)"); len(recs) != 1 ||
			!strings.Contains(recs[0]["reason"].(string), "test notification") {
			t.Errorf("%q: logged %v; want one line", host, recs)
		}
	}
}

// A resource version 2.0 comment event for a deleted comment, without its
// pull request: 200, nothing recorded.
func TestAzureDevOpsDeletedCommentThroughEvents(t *testing.T) {
	s := adoServer(t, "")
	body := []byte(`{"id":"3f0c1c1e-0000-0000-0000-000000000001","eventType":"ms.vss-code.git-pullrequest-comment-event",
		"publisherId":"tfs","resourceVersion":"2.0","message":{"text":"Yuro Itaki has deleted a pull request comment"},
		"resource":{"comment":{"id":1,"parentCommentId":0,"content":"atlantis plan","isDeleted":true,"commentType":"text"}}}`)
	code, out := postADO(t, s, body, adoHookPass)
	if code != http.StatusOK || out["queued"] != false {
		t.Fatalf("deleted comment: %d %v; want 200, not queued", code, out)
	}
	if p := pullsOf(t, s); len(p) != 0 || queuedRequests(t, s) != 0 {
		t.Errorf("recorded %v", p)
	}
}

// A real delivery as an Azure DevOps Server would send it, naming itself
// http://tfs01:8080/tfs while Atoll reaches it as tfs.example.com/tfs:
// accepted and recorded on the configured host once the notification URL
// is named, refused 400 with the flag to set before.
func TestAzureDevOpsServerTwoNamesThroughEvents(t *testing.T) {
	body := bytes.ReplaceAll(readADO(t, "real", "code_pull_request__opened.json"),
		[]byte("https://dev.azure.com/ttchong/"), []byte("http://tfs01:8080/tfs/ttchong/"))
	body = bytes.ReplaceAll(body, []byte("https://ttchong@dev.azure.com/ttchong/"), []byte("http://tfs01:8080/tfs/ttchong/"))

	s := adoServer(t, "tfs.example.com/tfs")
	code, out := postADO(t, s, body, adoHookPass)
	if code != http.StatusBadRequest || !strings.Contains(out["error"].(string), "--azuredevops-notification-url http://tfs01:8080") {
		t.Fatalf("without the notification URL: %d %v; want 400 naming the flag", code, out)
	}
	if len(pullsOf(t, s)) != 0 {
		t.Error("a refused delivery was recorded")
	}

	s = adoServer(t, "tfs.example.com/tfs", "http://tfs01:8080/tfs")
	if code, out := postADO(t, s, body, adoHookPass); code != http.StatusOK || out["queued"] != true {
		t.Fatalf("with the notification URL: %d %v; want 200, queued", code, out)
	}
	p := pullsOf(t, s)[1]
	if p == nil || p.Repo != zulipRepo || !strings.HasPrefix(p.URL, "https://tfs.example.com/tfs/ttchong/") {
		t.Errorf("recorded %+v; want pull 1 on https://tfs.example.com/tfs", p)
	}
}

package templates

import (
	"strings"
	"testing"
	"time"
)

func joinPieces(ps []Piece) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Match {
			b.WriteString("[" + p.Text + "]")
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func TestSnippet(t *testing.T) {
	cases := []struct {
		text  string
		terms []string
		want  string
	}{
		{"Error: BucketAlreadyExists here", []string{"bucketalreadyexists"}, "Error: [BucketAlreadyExists] here"},
		{"  # aws_s3_bucket.logs will be created", []string{"aws_s3_bucket.logs", "created"}, "  # [aws_s3_bucket.logs] will be [created]"},
		{"aws s3-bucket", []string{"aws_s3_bucket"}, "[aws s3-bucket]"},
		{"\x1b[31mError\x1b[0m: red", []string{"error"}, "[Error]: red"},
		{"no match at all", []string{"zzz"}, "no match at all"},
		{"terraform plan -out x.tfplan; plan", []string{"plan"}, "terraform [plan] -out x.tfplan; [plan]"},
		{"<b>x</b>", []string{"b"}, "<[b]>x</[b]>"}, // escaping is templ's, on render
	}
	for _, c := range cases {
		if got := joinPieces(Snippet(c.text, c.terms)); got != c.want {
			t.Errorf("Snippet(%q, %q) = %q, want %q", c.text, c.terms, got, c.want)
		}
	}
	// A long line is cut around its first match, on rune boundaries.
	long := strings.Repeat("é", 300) + " needle " + strings.Repeat("ü", 300)
	got := joinPieces(Snippet(long, []string{"needle"}))
	if !strings.Contains(got, "[needle]") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || len([]rune(got)) > snippetWidth {
		t.Errorf("long line: %q (%d runes)", got, len([]rune(got)))
	}
	if !strings.Contains(got, "é") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("long line cut inside a rune: %q", got)
	}
}

func TestRelativeTimesAndSpans(t *testing.T) {
	now := mustTime(t, "2026-11-22T16:00:00Z")
	for _, c := range []struct {
		at   string
		want string
	}{
		{"2026-11-22T15:59:58Z", "just now"},
		{"2026-11-22T15:59:30Z", "30 s ago"},
		{"2026-11-22T15:57:00Z", "3 min ago"},
		{"2026-11-22T11:00:00Z", "5 h ago"},
		{"2026-11-19T16:00:00Z", "3 days ago"},
	} {
		if got := ago(now, mustTime(t, c.at)); got != c.want {
			t.Errorf("ago(%s) = %q, want %q", c.at, got, c.want)
		}
	}
	if got := absolute(mustTime(t, "2026-11-22T15:57:03Z")); got != "Sun 22 Nov 2026 15:57:03 UTC" {
		t.Errorf("absolute = %q", got)
	}
	start, end := mustTime(t, "2026-11-22T15:00:00Z"), mustTime(t, "2026-11-22T15:02:05Z")
	if got := span(now, &start, &end); got != "2 min 5 s" {
		t.Errorf("span = %q", got)
	}
	if got := span(now, &start, nil); got != "1 h 0 min" {
		t.Errorf("running span = %q", got)
	}
	if got := span(now, nil, nil); got != "" {
		t.Errorf("queued span = %q", got)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

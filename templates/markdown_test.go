package templates

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

func render(t testing.TB, body string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := markdown(ParseComment(body)).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestParseCommentAtlantisStyle(t *testing.T) {
	body := "Ran Plan for dir: `staging` workspace: `default`\r\n\r\n" +
		"<details><summary>Show Output</summary>\n\n" +
		"```diff\n+ create\n  ~ change\n- destroy\n-/+ replace\n```\n" +
		"</details>\n\n" +
		"* :arrow_forward: To **apply** this plan, comment:\n  * `atlantis apply -d staging`\n\n" +
		"---\n#### Plan Summary\n<!-- atoll:plan -->\nline one<br>line two\n\n[Job log](http://localhost:4141/jobs/1) and [bad](javascript:alert(1)) and [rel](/jobs/2)"
	got := render(t, body)
	for _, want := range []string{
		`<p>Ran Plan for dir: <code>staging</code> workspace: <code>default</code></p>`,
		`<details><summary>Show Output</summary><div class="inner"><pre class="diff"><code>`,
		`<span class="d-add">+ create` + "\n</span>",
		`<span class="d-chg">  ~ change` + "\n</span>",
		`<span class="d-del">- destroy` + "\n</span>",
		`<span class="d-chg">-/+ replace</span>`,
		`</code></pre></div></details>`,
		`<li>▶️ To <b>apply</b> this plan, comment:</li><li><code>atlantis apply -d staging</code></li>`,
		`<hr>`, `<div class="h">Plan Summary</div>`,
		"<p>line one\nline two</p>",
		`<p><a href="http://localhost:4141/jobs/1" rel="nofollow noopener noreferrer">Job log</a> and [bad](javascript:alert(1)) and <a href="/jobs/2" rel="nofollow noopener noreferrer">rel</a></p>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered comment lacks %q\n%s", want, got)
		}
	}
	if strings.Contains(got, "atoll:plan") {
		t.Error("HTML comment shown")
	}
}

func TestParseCommentStructure(t *testing.T) {
	blocks := ParseComment("<details>\n<summary><b>Out</b> `x`</summary>\ninside\n<details><summary>inner</summary>\ndeep\n</details>\nafter inner\n</details> tail\n```\nunterminated </details>")
	if len(blocks) != 3 || blocks[0].Kind != "details" || blocks[1].Kind != "p" || blocks[2].Kind != "code" {
		t.Fatalf("blocks = %+v", blocks)
	}
	d := blocks[0]
	if len(d.Summary) != 2 || d.Summary[0].Text != "Out " || !d.Summary[1].Code || d.Summary[1].Text != "x" {
		t.Errorf("summary = %+v", d.Summary)
	}
	if len(d.Children) != 3 || d.Children[1].Kind != "details" || d.Children[2].Spans[0].Text != "after inner" {
		t.Errorf("children = %+v", d.Children)
	}
	if blocks[1].Spans[0].Text != "tail" {
		t.Errorf("text after </details> = %+v", blocks[1])
	}
	if blocks[2].Code != "unterminated </details>" {
		t.Errorf("code = %q", blocks[2].Code)
	}
	// A stray closing tag at top level is text.
	if b := ParseComment("</details>"); len(b) != 1 || b[0].Kind != "p" || b[0].Spans[0].Text != "</details>" {
		t.Errorf("stray close = %+v", b)
	}
}

func TestParseCommentDeepNesting(t *testing.T) {
	body := strings.Repeat("<details>\n", 10000) + "x" + strings.Repeat("\n</details>", 10000)
	got := render(t, body)
	if n := strings.Count(got, "<details>"); n != maxDepth {
		t.Errorf("%d nested details rendered, want %d", n, maxDepth)
	}
}

// adversarialComments are inputs that would make a careless renderer
// quadratic; each is about 250 KB (quadratic work would take minutes).
func adversarialComments() map[string]string {
	var runs strings.Builder
	runs.WriteString("x ")
	for n := 700; n > 0; n-- {
		runs.WriteString(strings.Repeat("`", n) + " ")
	}
	return map[string]string{
		"open-close": strings.Repeat("<details></details>", 13000),
		"opens":      strings.Repeat("<details>", 28000),
		"closes":     strings.Repeat("<details>\n", 16) + strings.Repeat("</details>", 25000),
		"summaries":  "<details>" + strings.Repeat("<summary>a</summary>", 12000),
		"summary":    strings.Repeat("<details><summary>", 14000),
		"runs":       runs.String(),
		"bold":       strings.Repeat("** ", 80000),
		"brackets":   strings.Repeat("[", 250000),
		"links":      strings.Repeat("[a](", 60000),
		"backticks":  "x" + strings.Repeat("` ``", 60000),
		"lines":      strings.Repeat("<details>\n</details>\n", 12000),
	}
}

// TestParseCommentAdversarial renders each adversarial input to tags the
// renderer writes itself; how long that takes is BenchmarkParseComment's.
func TestParseCommentAdversarial(t *testing.T) {
	for name, body := range adversarialComments() {
		got := render(t, body)
		if rest := emitted.ReplaceAllString(got, ""); strings.ContainsAny(rest, "<>") {
			t.Errorf("%s: rendered markup the renderer does not write", name)
		}
	}
}

// BenchmarkParseComment renders each adversarial input: a linear renderer
// takes milliseconds, a quadratic one minutes.
func BenchmarkParseComment(b *testing.B) {
	for name, body := range adversarialComments() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				render(b, body)
			}
		})
	}
}

// emitted matches every tag the renderer writes itself.
var emitted = regexp.MustCompile(`</?(p|div|ul|li|pre|code|span|details|summary|b|a)( class="[a-z -]*")?>|<hr>|<a href="[^"<>]*" rel="nofollow noopener noreferrer">`)

var hrefs = regexp.MustCompile(`href="([^"]*)"`)

func FuzzParseComment(f *testing.F) {
	for _, s := range []string{
		"<script>alert(1)</script>",
		"<details><summary><img src=x onerror=alert(1)></summary>\n<a href=javascript:x>y</a>\n</details>",
		"```\n</code></pre><script>x</script>\n```",
		"**<b>bold</b>** `<i>` ``` x",
		"<details open><summary>a</summary>b</details>",
		"* <li>\n- `</li>`\n---\n# <h1>",
		"[x](https://a\"onclick=b) [<b>](/x<y>) [y](//evil) [z](JavaScript:1)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		html := render(t, body)
		for _, m := range hrefs.FindAllStringSubmatch(html, -1) {
			if u := strings.ToLower(m[1]); !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") &&
				(!strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//")) {
				t.Errorf("link to %q", m[1])
			}
		}
		got := emitted.ReplaceAllString(html, "")
		if strings.ContainsAny(got, "<>") {
			t.Errorf("markup from the comment reached the page: %q", got)
		}
	})
}

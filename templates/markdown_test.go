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
		"---\n#### Plan Summary\n<!-- atoll:plan -->\nline one<br>line two"
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

// emitted matches every tag the renderer writes itself.
var emitted = regexp.MustCompile(`</?(p|div|ul|li|pre|code|span|details|summary|b)( class="[a-z -]*")?>|<hr>`)

func FuzzParseComment(f *testing.F) {
	for _, s := range []string{
		"<script>alert(1)</script>",
		"<details><summary><img src=x onerror=alert(1)></summary>\n<a href=javascript:x>y</a>\n</details>",
		"```\n</code></pre><script>x</script>\n```",
		"**<b>bold</b>** `<i>` ``` x",
		"<details open><summary>a</summary>b</details>",
		"* <li>\n- `</li>`\n---\n# <h1>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got := emitted.ReplaceAllString(render(t, body), "")
		if strings.ContainsAny(got, "<>") {
			t.Errorf("markup from the comment reached the page: %q", got)
		}
	})
}

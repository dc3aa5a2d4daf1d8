package markdown_test

import (
	"testing"

	"github.com/atollhq/atoll/runner/markdown"
)

// --enable-diff-markdown-format: on (Atoll's default) the change markers
// lead the line so GitHub colours them; off (RawPlanOutput, Atlantis's
// default) the diff block holds the plan as Terraform printed it.
func TestDiffMarkdownFormat(t *testing.T) {
	const out = "Terraform will perform the following actions:\n\n" +
		"  # null_resource.a will be created\n" +
		"  + resource \"null_resource\" \"a\" {\n" +
		"      + id = (known after apply)\n" +
		"    }\n" +
		"  ~ resource \"null_resource\" \"b\" {\n" +
		"      - x = 1 -> null\n" +
		"    }\n" +
		"-/+ resource \"null_resource\" \"c\" {\n"
	res := markdown.ProjectResult{Command: "plan", Dir: "app", Output: out, HasChanges: true}
	cases := []struct {
		name    string
		r       markdown.Renderer
		want    []string
		wantNot []string
	}{
		{"moved markers", markdown.Renderer{}, []string{
			"```diff\n",
			"\n+   resource \"null_resource\" \"a\" {\n",
			"\n+       id = (known after apply)\n",
			"\n~   resource \"null_resource\" \"b\" {\n",
			"\n-       x = 1 -> null\n",
			"\n-/+ resource \"null_resource\" \"c\" {\n",
			"\n  # null_resource.a will be created\n",
		}, []string{"\n  + resource"}},
		{"raw output", markdown.Renderer{RawPlanOutput: true}, []string{"```diff\n" + out}, []string{"\n+   resource"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := one(t, tc.r, "plan", res)
			mustContain(t, got, tc.want...)
			mustNotContain(t, got, tc.wantNot...)
		})
	}
}

package ansi_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/atollhq/atoll/ansi"
)

// The job page renders stored lines with this package and live lines with
// the same parser in assets/live.js: both must agree on every line. The
// test runs live.js in Node.js (skipped where there is none).
func TestLiveJSAgrees(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: live.js not checked")
	}
	inputs := []string{
		"", "plain", "  \x1b[32m+\x1b[0m resource \"aws_s3_bucket\" \"b\" {",
		"\x1b[1m\x1b[31mError: \x1b[0m\x1b[0m\x1b[1mbad\x1b[0m", "\x1b[1;33mwarn\x1b[22m x\x1b[39m y",
		"\x1b[96;41mc\x1b[m", "\x1b[38;5;196;1mx", "\x1b[38;2;1;2;3mrgb\x1b[0m", "\x1b[2K\x1b[1Gdone\x1b]0;title\x07!\x1b]8;;http://x\x1b\\link\x1b=",
		"a\rb\x00c\td\x7f", "x\x1b[31", "\x1b[3;4mstyled\x1b[23;24m", "\x1b[90mgrey\x1b[100mbg\x1b[49m",
		"      \x1b[33m~\x1b[0m tags = {", "\x1b[31m-/+\x1b[0m resource", " <= data", "--- not a diff", "-", "  -", "- Installing hashicorp/aws v5.0.0...", "\x1b[1m- x\x1b[0m", "+/- r", "é \x1b[1mü\x1b[0m",
	}
	script := `
global.window = {};
global.document = { readyState: "complete", querySelectorAll: () => [], getElementById: () => null, addEventListener() {} };
require(process.argv[1]);
const inputs = JSON.parse(require("fs").readFileSync(0, "utf8"));
const strip = s => window.atollLive.parseANSI(s).map(x => x.text).join("");
process.stdout.write(JSON.stringify(inputs.map(s => ({ segs: window.atollLive.parseANSI(s), diff: window.atollLive.diffClass(strip(s)) }))));
`
	in, _ := json.Marshal(inputs)
	liveJS, _ := filepath.Abs("../assets/live.js")
	cmd := exec.Command(node, "-e", script, liveJS)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	type seg struct {
		Text    string   `json:"text"`
		Classes []string `json:"classes"`
	}
	var got []struct {
		Segs []seg  `json:"segs"`
		Diff string `json:"diff"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, s := range inputs {
		want := []seg{}
		for _, g := range ansi.Parse(s) {
			want = append(want, seg{Text: g.Text, Classes: append([]string{}, g.Classes...)})
		}
		if !reflect.DeepEqual(got[i].Segs, want) {
			t.Errorf("%q: live.js %+v; Go %+v", s, got[i].Segs, want)
		}
		wantDiff := ansi.Diff(ansi.Strip(s))
		if wantDiff != "" {
			wantDiff = "d-" + wantDiff
		}
		if got[i].Diff != wantDiff {
			t.Errorf("%q: live.js diff %q; Go %q", s, got[i].Diff, wantDiff)
		}
	}
}

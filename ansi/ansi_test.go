package ansi_test

import (
	"reflect"
	"testing"

	"github.com/atollhq/atoll/ansi"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []ansi.Segment
	}{
		{"plain", "no colour", []ansi.Segment{{Text: "no colour"}}},
		{"empty", "", nil},
		{"terraform add", "  \x1b[32m+\x1b[0m\x1b[0m resource \"x\" \"y\" {",
			[]ansi.Segment{{Text: "  "}, {Text: "+", Classes: []string{"fg-green"}}, {Text: " resource \"x\" \"y\" {"}}},
		{"bold and colour", "\x1b[1m\x1b[31mError: \x1b[0m\x1b[0m\x1b[1mbad\x1b[0m",
			[]ansi.Segment{{Text: "Error: ", Classes: []string{"b", "fg-red"}}, {Text: "bad", Classes: []string{"b"}}}},
		{"combined params", "\x1b[1;33mwarn\x1b[22m x\x1b[39m y",
			[]ansi.Segment{{Text: "warn", Classes: []string{"b", "fg-yellow"}}, {Text: " x", Classes: []string{"fg-yellow"}}, {Text: " y"}}},
		{"bright and background", "\x1b[96;41mc\x1b[m", []ansi.Segment{{Text: "c", Classes: []string{"fg-bright-cyan", "bg-red"}}}},
		{"256 colours skipped", "\x1b[38;5;196;1mx", []ansi.Segment{{Text: "x", Classes: []string{"b"}}}},
		{"other sequences stripped", "\x1b[2K\x1b[1Gdone\x1b]0;title\x07!\x1b]8;;http://x\x1b\\link\x1b=", []ansi.Segment{{Text: "done!link"}}},
		{"control characters", "a\rb\x00c\td", []ansi.Segment{{Text: "abc\td"}}},
		{"markup stays text", "<script>\x1b[31m&amp;", []ansi.Segment{{Text: "<script>"}, {Text: "&amp;", Classes: []string{"fg-red"}}}},
		{"unterminated", "x\x1b[31", []ansi.Segment{{Text: "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ansi.Parse(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q) = %#v; want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestStrip(t *testing.T) {
	if got := ansi.Strip("\x1b[1m\x1b[32m+\x1b[0m add\r"); got != "+ add" {
		t.Fatalf("Strip = %q", got)
	}
	if got := ansi.Strip("plain"); got != "plain" {
		t.Fatalf("Strip = %q", got)
	}
	// Strip keeps exactly the text Parse finds.
	for _, in := range []string{"\x1b[2K\x1b[1Gdone\x1b]0;title\x07!\x1b]8;;http://x\x1b\\link\x1b=", "a\rb\x00c\td", "x\x1b[31", "\x1b[1;33mwarn\x1b[22m x"} {
		var want string
		for _, s := range ansi.Parse(in) {
			want += s.Text
		}
		if got := ansi.Strip(in); got != want {
			t.Errorf("Strip(%q) = %q; Parse's text is %q", in, got, want)
		}
	}
}

func TestDiff(t *testing.T) {
	for in, want := range map[string]string{
		`  + resource "a" "b" {`:      "add",
		`      ~ tags = {`:            "change",
		`  - resource "a" "b" {`:      "destroy",
		`-/+ resource "a" "b" {`:      "replace",
		`  +/- resource "a" "b" {`:    "replace",
		` <= data "x" "y" {`:          "read",
		`Plan: 1 to add, 0 to change`: "",
		`--- a`:                       "",
		`  +`:                         "add",
		`+`:                           "",
		"- terraform.io/builtin/terraform is built in to Terraform": "",
		"- Installing hashicorp/aws v5.0.0...":                      "",
		`~ x`:                                                       "",
		`-------------------------`:                                 "",
		`  ~tags`:                                                   "",
		"\t+ tab indented":                                          "add",
	} {
		if got := ansi.Diff(in); got != want {
			t.Errorf("Diff(%q) = %q; want %q", in, got, want)
		}
	}
}

// StripEscapes drops what Strip drops of escape sequences, and keeps the
// other control characters; EscapeLen says when a sequence is cut short.
func TestStripEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                         "plain",
		"\x1b[1m\x1b[32m+\x1b[0m add\r": "+ add\r",
		"\x1b[2Kdone\x1b]0;title\x07!\x1b=\tx\x00": "done!\tx\x00",
		"\x1b]8;;http://x\x1b\\link":               "link",
		"x\x1b[31":                                 "x",
		"x\x1b]0;never ends":                       "x",
		"x\x1b":                                    "x",
	} {
		if got := ansi.StripEscapes(in); got != want {
			t.Errorf("StripEscapes(%q) = %q, want %q", in, got, want)
		}
		if got := string(ansi.AppendEscapesStripped([]byte(">"), []byte(in))); got != ">"+want {
			t.Errorf("AppendEscapesStripped(%q) = %q, want %q", in, got, ">"+want)
		}
	}
	for in, want := range map[string]int{"\x1b": -1, "\x1b[": -1, "\x1b[1;3": -1, "\x1b[1mx": 4, "\x1b]0;t\x07x": 6, "\x1b]0;t\x1b\\": 7, "\x1b]0;t": -1, "\x1b7x": 2} {
		if got := ansi.EscapeLen(in); got != want {
			t.Errorf("EscapeLen(%q) = %d, want %d", in, got, want)
		}
	}
}

package command_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   \t ", nil},
		{"a", []string{"a"}},
		{" a  b\tc\n d ", []string{"a", "b", "c", "d"}},
		{"a\u00a0b\u2003c", []string{"a", "b", "c"}},
		{`'a b' "c d"`, []string{"a b", "c d"}},
		{`a'b c'd`, []string{"ab cd"}},
		{`'' ""`, []string{"", ""}},
		{`a '' b`, []string{"a", "", "b"}},
		{`'a\b' '"'`, []string{`a\b`, `"`}},
		{`"a'b"`, []string{"a'b"}},
		{`"\" \\ \$ \` + "`" + `"`, []string{`" \ $ ` + "`"}},
		{`"\a \n"`, []string{`\a \n`}},
		{`"é\é"`, []string{`é\é`}},
		{`a\ b \'c\" \\`, []string{"a b", `'c"`, `\`}},
		{"a\\\nb", []string{"ab"}},
		{"\\\n", nil},
		{"\"a\\\nb\"", []string{"ab"}},
		{`\é`, []string{"é"}},
		{`-var 'a=b c' -var "x=\"y\""`, []string{"-var", "a=b c", "-var", `x="y"`}},
		{"$(rm -rf /); `id` | a && b > c # d", []string{"$(rm", "-rf", "/);", "`id`", "|", "a", "&&", "b", ">", "c", "#", "d"}},
		{`$'\x41'`, []string{`$\x41`}},
		{"a\xffb 'c\xfe'", []string{"a\xffb", "c\xfe"}},
	}
	for _, tt := range tests {
		got, err := command.SplitWords(tt.in)
		if err != nil {
			t.Errorf("SplitWords(%q) error: %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitWordsErrors(t *testing.T) {
	tests := []struct{ in, phrase string }{
		{`'a`, "unterminated single quote"},
		{`a 'b c`, "unterminated single quote"},
		{`"a`, "unterminated double quote"},
		{`"a\"`, "unterminated double quote"},
		{`"a\`, "unterminated double quote"},
		{`a\`, "unfinished escape"},
		{`'a'"`, "unterminated double quote"},
	}
	for _, tt := range tests {
		got, err := command.SplitWords(tt.in)
		var aerr *atoll.Error
		if !errors.As(err, &aerr) || aerr.Code != atoll.EINVALID {
			t.Errorf("SplitWords(%q) = %q, %v; want an EINVALID *atoll.Error", tt.in, got, err)
			continue
		}
		if !strings.Contains(aerr.Message, tt.phrase) {
			t.Errorf("SplitWords(%q) message %q lacks %q", tt.in, aerr.Message, tt.phrase)
		}
	}
}

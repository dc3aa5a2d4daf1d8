package planview

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// valueOf renders a redacted value.
func valueOf(v any) *Value {
	switch v.(type) {
	case sensitive:
		return &Value{Text: sensitiveText, Sensitive: true}
	case unknown:
		return &Value{Text: unknownText, Unknown: true}
	}
	var b strings.Builder
	render(&b, v, "")
	return &Value{Text: b.String()}
}

// render writes v as indented JSON, with the markers written bare (as
// Terraform shows them) so that they cannot be mistaken for strings.
func render(b *strings.Builder, v any, indent string) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case sensitive:
		b.WriteString(sensitiveText)
	case unknown:
		b.WriteString(unknownText)
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(t.String())
	case string:
		b.WriteString(quote(t))
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range t {
			b.WriteString(indent + "  ")
			render(b, e, indent+"  ")
			if i < len(t)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case map[string]any:
		if len(t) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{\n")
		for i, k := range keys {
			b.WriteString(indent + "  " + quote(k) + ": ")
			render(b, t[k], indent+"  ")
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	default:
		b.WriteString("?")
	}
}

// quote is s as a JSON string, without HTML escaping (the page escapes).
func quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

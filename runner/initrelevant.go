package runner

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// initRelevant is the part of a .tf file that terraform init acts on: the
// terraform block (backend, cloud, required_providers, required_version),
// module calls' source, version and providers, the providers that provider
// blocks, resource/data/ephemeral/import blocks and provider arguments
// imply, and any block it does not know. Resource arguments, variables,
// outputs, locals and moved/removed blocks are read at plan time: changing
// them needs no new init, which is what lets a push that only edits
// resources skip it. When the file does not parse, or calls provider
// functions (provider::…, which need their provider installed), the whole
// file counts.
func initRelevant(name string, src []byte) []byte {
	if bytes.Contains(src, []byte("provider::")) {
		return src
	}
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return src
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return src
	}
	var b bytes.Buffer
	types := map[string]bool{}
	writeInitRelevant(&b, src, body, types)
	sorted := make([]string, 0, len(types))
	for t := range types {
		sorted = append(sorted, t)
	}
	sort.Strings(sorted)
	for _, t := range sorted {
		fmt.Fprintf(&b, "uses\x00%s\x00", t)
	}
	return b.Bytes()
}

// atPlanTime are block types whose content init never reads.
var atPlanTime = map[string]bool{"variable": true, "output": true, "locals": true, "moved": true, "removed": true}

func writeInitRelevant(b *bytes.Buffer, src []byte, body *hclsyntax.Body, uses map[string]bool) {
	text := func(r hcl.Range) []byte { return src[r.Start.Byte:r.End.Byte] }
	attr := func(blk *hclsyntax.Block, name string) string {
		if a, ok := blk.Body.Attributes[name]; ok {
			return string(text(a.Expr.Range()))
		}
		return ""
	}
	for _, blk := range body.Blocks {
		switch {
		case atPlanTime[blk.Type]:
		case blk.Type == "module":
			fmt.Fprintf(b, "module\x00%q\x00%s\x00%s\x00%s\x00", blk.Labels, attr(blk, "source"), attr(blk, "version"), attr(blk, "providers"))
		case blk.Type == "provider":
			uses[fmt.Sprintf("provider %q", blk.Labels)] = true
		case (blk.Type == "resource" || blk.Type == "data" || blk.Type == "ephemeral") && len(blk.Labels) > 0:
			// A type implies its provider; only the set of types counts, so
			// another resource of a type already used changes nothing.
			uses[fmt.Sprintf("%s %s %s", blk.Type, blk.Labels[0], attr(blk, "provider"))] = true
		case blk.Type == "import":
			uses["import provider "+attr(blk, "provider")] = true
		case blk.Type == "check":
			writeInitRelevant(b, src, blk.Body, uses) // may hold scoped data blocks
		default: // terraform, and anything unknown: all of it
			b.WriteString(blk.Type + "\x00")
			b.Write(text(blk.Range()))
			b.WriteByte(0)
		}
	}
}

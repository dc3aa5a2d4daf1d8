package terraform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/ansi"
)

// showPlan is the part of terraform's JSON plan format that Summarize reads.
type showPlan struct {
	FormatVersion   string `json:"format_version"`
	ResourceChanges []struct {
		Change struct {
			Actions   []string        `json:"actions"`
			Importing json.RawMessage `json:"importing"`
		} `json:"change"`
	} `json:"resource_changes"`
}

// Summarize counts the resource changes of `terraform show -json` output the
// way terraform's own "Plan:" line does: a replacement is one add and one
// destroy, and an import counts in addition to any update it comes with.
func Summarize(showJSON []byte) (atoll.Summary, error) {
	var s atoll.Summary
	if !bytes.HasPrefix(bytes.TrimSpace(showJSON), []byte("{")) {
		return s, errors.New("summarize plan: not a JSON object")
	}
	var p showPlan
	if err := json.Unmarshal(showJSON, &p); err != nil {
		return s, fmt.Errorf("summarize plan: %w", err)
	}
	// The format promises to bump the major version on breaking changes.
	if major, _, _ := strings.Cut(p.FormatVersion, "."); p.FormatVersion != "" && major != "1" {
		return s, fmt.Errorf("summarize plan: unsupported format version %q", p.FormatVersion)
	}
	for _, rc := range p.ResourceChanges {
		a := rc.Change.Actions
		switch {
		case len(a) == 1 && a[0] == "create":
			s.Add++
		case len(a) == 1 && a[0] == "update":
			s.Change++
		case len(a) == 1 && a[0] == "delete":
			s.Destroy++
		case len(a) == 2 && (a[0] == "delete" && a[1] == "create" || a[0] == "create" && a[1] == "delete"):
			s.Add++
			s.Destroy++
		case len(a) == 1 && (a[0] == "no-op" || a[0] == "read" || a[0] == "forget"):
		default:
			// An action newer than this code: never report it as "no changes".
			s.Change++
		}
		if imp := bytes.TrimSpace(rc.Change.Importing); len(imp) > 0 && !bytes.Equal(imp, []byte("null")) {
			s.Import++
		}
	}
	return s, nil
}

var (
	planLine  = regexp.MustCompile(`^Plan: (\d+ to \w+(?:, \d+ to \w+)*)\.`)
	applyLine = regexp.MustCompile(`^(?:Apply|Destroy) complete! Resources: (\d+ \w+(?:, \d+ \w+)*)\.`)
	countItem = regexp.MustCompile(`(\d+) (?:to )?(\w+)`)
)

// ParseSummaryLine finds the last summary terraform printed in its human
// output: "Plan: 1 to add, 0 to change, 0 to destroy." (with imports in
// either position), "No changes." or "Apply complete! Resources: ...".
func ParseSummaryLine(output string) (atoll.Summary, bool) {
	lines := strings.Split(ansi.StripEscapes(output), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "No changes.") {
			return atoll.Summary{}, true
		}
		m := planLine.FindStringSubmatch(l)
		if m == nil {
			m = applyLine.FindStringSubmatch(l)
		}
		if m == nil {
			continue
		}
		if s, ok := parseCounts(m[1]); ok {
			return s, true
		}
	}
	return atoll.Summary{}, false
}

// PlanSummary reads the summary terraform plan printed in its own human
// output, so that a plan can be told before its JSON is made. Only lines
// terraform writes at the start of a line count ("Plan: ..." and "No
// changes."): everything a configuration controls (attribute and output
// values, heredocs, diagnostics) is printed indented or behind a frame, so
// a value cannot pass itself off as the summary. A plan that printed
// neither (only outputs change, a refresh-only plan, JSON output) gives
// false: the caller reads the plan's JSON instead.
func PlanSummary(planOutput string) (atoll.Summary, bool) {
	lines := strings.Split(ansi.StripEscapes(planOutput), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], " \r")
		if strings.HasPrefix(l, "No changes. ") {
			return atoll.Summary{}, true
		}
		if m := fullPlanLine.FindStringSubmatch(l); m != nil {
			return parseCounts(m[1])
		}
	}
	return atoll.Summary{}, false
}

// fullPlanLine is terraform's plan summary as the whole line.
var fullPlanLine = regexp.MustCompile(`^Plan: (\d+ to \w+(?:, \d+ to \w+)*)\.$`)

func parseCounts(list string) (atoll.Summary, bool) {
	var s atoll.Summary
	for _, m := range countItem.FindAllStringSubmatch(list, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return s, false
		}
		switch m[2] {
		case "add", "added":
			s.Add = n
		case "change", "changed":
			s.Change = n
		case "destroy", "destroyed":
			s.Destroy = n
		case "import", "imported":
			s.Import = n
		case "forget", "forgotten": // terraform 1.7+, not in atoll.Summary
		default:
			return s, false
		}
	}
	return s, true
}

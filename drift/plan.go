package drift

import "strings"

// OutsideNote is the line Terraform prints when refreshing found objects
// changed outside of Terraform. Such changes are drift even when the plan
// itself has nothing to do.
const OutsideNote = "Note: Objects have changed outside of Terraform"

// Details is how far a project's real infrastructure has moved from its
// configuration, as one plan measured it: the API's "drift" object.
type Details struct {
	ToAdd          int    `json:"to_add"`
	ToChange       int    `json:"to_change"`
	ToDestroy      int    `json:"to_destroy"`
	ToImport       int    `json:"to_import"`
	ToForget       int    `json:"to_forget"`
	TotalChanges   int    `json:"total_changes"`
	Summary        string `json:"summary,omitempty"`
	ChangesOutside bool   `json:"changes_outside"`
}

// FromPlan builds the drift of a plan from its counts, whether Terraform
// noted changes outside of it, and its one-line summary ("Plan: ..." or
// "No changes. ..."). The outside note is put in front of the summary, in
// bold on its own line, because the counts alone would hide it.
func FromPlan(add, change, destroy, imp, forget int, changedOutside bool, summaryLine string) Details {
	summary := summaryLine
	if changedOutside {
		summary = "\n**" + OutsideNote + "**\n" + summaryLine
	}
	return Details{
		ToAdd:          add,
		ToChange:       change,
		ToDestroy:      destroy,
		ToImport:       imp,
		ToForget:       forget,
		TotalChanges:   add + change + destroy + imp + forget,
		Summary:        summary,
		ChangesOutside: changedOutside,
	}
}

// HasDrift reports whether d shows drift: a plan with anything to do, or
// objects changed outside of Terraform even if the plan has nothing to do.
func HasDrift(d Details) bool {
	return d.ToAdd > 0 || d.ToChange > 0 || d.ToDestroy > 0 || d.ToImport > 0 || d.ToForget > 0 || d.ChangesOutside
}

// ParseChangedOutside reports whether Terraform's plan output contains its
// note that objects changed outside of Terraform.
func ParseChangedOutside(output string) bool {
	return strings.Contains(output, OutsideNote)
}

// SummaryLine is the last line of Terraform's plan output that sums the
// plan up ("Plan: 1 to add, 0 to change, 0 to destroy." or "No changes.
// Your infrastructure matches the configuration."), "" when none.
func SummaryLine(output string) string {
	line := ""
	for _, l := range strings.Split(output, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Plan: ") || strings.HasPrefix(l, "No changes.") {
			line = l
		}
	}
	return line
}

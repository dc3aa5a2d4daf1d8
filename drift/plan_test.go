package drift

import "testing"

// TestFromPlan: in Atlantis's alpha drift API (v0.47) any add, change,
// destroy, import or forget count, or the outside-changes note alone, is
// drift; a plan of zeros (or no plan at all, all zeros) is not. The
// summary line passes through, with the note in bold in front of it when
// objects changed outside of Terraform.
func TestFromPlan(t *testing.T) {
	for _, tc := range []struct {
		name                              string
		add, change, destroy, imp, forget int
		outside                           bool
		line                              string
		want                              Details
		drift                             bool
	}{
		{"nothing", 0, 0, 0, 0, 0, false, "Plan: 0 to add, 0 to change, 0 to destroy.",
			Details{Summary: "Plan: 0 to add, 0 to change, 0 to destroy."}, false},
		{"no plan", 0, 0, 0, 0, 0, false, "", Details{}, false},
		{"add", 1, 0, 0, 0, 0, false, "Plan: 1 to add, 0 to change, 0 to destroy.",
			Details{ToAdd: 1, TotalChanges: 1, Summary: "Plan: 1 to add, 0 to change, 0 to destroy."}, true},
		{"change", 0, 2, 0, 0, 0, false, "s", Details{ToChange: 2, TotalChanges: 2, Summary: "s"}, true},
		{"destroy", 0, 0, 3, 0, 0, false, "s", Details{ToDestroy: 3, TotalChanges: 3, Summary: "s"}, true},
		{"import", 0, 0, 0, 4, 0, false, "s", Details{ToImport: 4, TotalChanges: 4, Summary: "s"}, true},
		{"forget", 0, 0, 0, 0, 3, false, "s", Details{ToForget: 3, TotalChanges: 3, Summary: "s"}, true},
		{"all", 1, 2, 3, 4, 5, false, "s",
			Details{ToAdd: 1, ToChange: 2, ToDestroy: 3, ToImport: 4, ToForget: 5, TotalChanges: 15, Summary: "s"}, true},
		{"outside only", 0, 0, 0, 0, 0, true, "No changes. Infrastructure is up-to-date.",
			Details{ChangesOutside: true,
				Summary: "\n**Note: Objects have changed outside of Terraform**\nNo changes. Infrastructure is up-to-date."}, true},
		{"outside and changes", 1, 0, 0, 0, 0, true, "Plan: 1 to add, 0 to change, 0 to destroy.",
			Details{ToAdd: 1, TotalChanges: 1, ChangesOutside: true,
				Summary: "\n**Note: Objects have changed outside of Terraform**\nPlan: 1 to add, 0 to change, 0 to destroy."}, true},
	} {
		got := FromPlan(tc.add, tc.change, tc.destroy, tc.imp, tc.forget, tc.outside, tc.line)
		if got != tc.want {
			t.Errorf("%s: FromPlan = %+v, want %+v", tc.name, got, tc.want)
		}
		if HasDrift(got) != tc.drift {
			t.Errorf("%s: HasDrift = %v, want %v", tc.name, !tc.drift, tc.drift)
		}
	}
}

// TestParseChangedOutside: Terraform prints "Note: Objects have changed
// outside of Terraform" when refresh found changes made elsewhere;
// Atlantis's alpha drift API (v0.47) treats that note as drift.
func TestParseChangedOutside(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		want         bool
	}{
		{"note", "\nNote: Objects have changed outside of Terraform\n\nTerraform detected the following changes...\n\nNo changes. Your infrastructure matches the configuration.\n", true},
		{"note with changes", "Note: Objects have changed outside of Terraform\n...\nPlan: 1 to add, 0 to change, 0 to destroy.", true},
		{"no note", "No changes. Your infrastructure matches the configuration.", false},
		{"plan only", "Plan: 1 to add, 0 to change, 0 to destroy.", false},
		{"empty", "", false},
		{"other case", "note: objects have changed outside of terraform", false},
	} {
		if got := ParseChangedOutside(tc.output); got != tc.want {
			t.Errorf("%s: ParseChangedOutside = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Terraform 1.5's plan prints its summary as the last "Plan: …" line, or a
// "No changes." line; SummaryLine finds either among the rest.
func TestSummaryLine(t *testing.T) {
	for _, tc := range []struct{ output, want string }{
		{"Terraform will perform the following actions:\n\n  # x will be created\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n\nChanges to Outputs:\n", "Plan: 1 to add, 0 to change, 0 to destroy."},
		{"\nNo changes. Your infrastructure matches the configuration.\n\nTerraform has compared...\n", "No changes. Your infrastructure matches the configuration."},
		{"Error: something\n", ""},
	} {
		if got := SummaryLine(tc.output); got != tc.want {
			t.Errorf("SummaryLine(%q) = %q; want %q", tc.output, got, tc.want)
		}
	}
}

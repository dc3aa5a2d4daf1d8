package runner

// misplacedStateStep reports whether a step cannot run in a stage: import
// and state_rm steps belong to their own stages (they need the comment's
// addresses), and those stages have no plan file for plan, show or apply.
func misplacedStateStep(stage, step string) bool {
	switch stage {
	case "import", "state_rm":
		return step == "plan" || step == "show" || step == "apply" || (step != stage && (step == "import" || step == "state_rm"))
	}
	return step == "import" || step == "state_rm"
}

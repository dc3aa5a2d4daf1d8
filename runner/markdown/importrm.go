package markdown

import (
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
)

// stateChanged renders a successful import or state rm: Terraform's output,
// that it succeeded, and that the project must be planned again before an
// apply, as Atlantis says after either.
func (r Renderer) stateChanged(b *strings.Builder, res ProjectResult) {
	if strings.TrimSpace(res.Output) != "" {
		r.details(b, "diff", res.Output)
		b.WriteString("\n")
	}
	what := "Import successful"
	if res.Command == atoll.JobStateRm {
		what = "State rm successful"
	}
	fmt.Fprintf(b, "**%s.**\n\n", what)
	if res.PlanDiscarded {
		b.WriteString(":put_litter_in_its_place: The project's unapplied plan was discarded: it was made against the old state. Plan again before applying.\n\n")
	} else {
		b.WriteString(":put_litter_in_its_place: The state changed: plan again before applying.\n\n")
	}
	fmt.Fprintf(b, "* :repeat: To **plan** this project again, comment: %s\n", code(r.commandFor("plan", res)))
}

package runner

import (
	"context"
	"strings"

	"github.com/atollhq/atoll"
)

// stateCommand runs an import or state_rm step: `terraform import` or
// `terraform state rm` with Atoll's flags, the step's extra_args, the
// comment's arguments after "--", then the comment's addresses (and ID),
// each one argv entry: nothing reaches a shell. As in Atlantis, extra
// arguments come before the addresses.
func (s *steps) stateCommand(ctx context.Context, st atoll.Step) error {
	args, err := stateCommandArgs(st.Name, st.ExtraArgs, s.j.Spec.ExtraArgs, s.j.Spec.Args)
	if err != nil {
		return err
	}
	if err := checkVarFiles(s.dir, s.j.Dir, args); err != nil {
		return err
	}
	s.sink.Write(atoll.StreamAtoll, "$ terraform "+strings.Join(args, " "))
	out, err := s.terraform().Run(ctx, s.dir, args, s.x.emit)
	s.outputs = append(s.outputs, out)
	return err
}

// stateCommandArgs is the argument list of an import or state_rm step. The
// positional arguments go last and may not look like flags: Terraform would
// read "-x" there as one.
func stateCommandArgs(step string, stepArgs, commentArgs, positional []string) ([]string, error) {
	// Atoll's own flags go after the extra arguments, where Terraform's
	// last-wins flag parsing keeps them (see terraform.PlanArgv).
	want, cmd, own := 2, []string{"import"}, []string{"-input=false", "-no-color"}
	if step == "state_rm" {
		want, cmd, own = -1, []string{"state", "rm"}, []string{"-no-color"}
	}
	if len(positional) == 0 || (want > 0 && len(positional) != want) {
		if step == "state_rm" {
			return nil, atoll.Errorf(atoll.EINVALID, "state rm needs at least one ADDRESS.")
		}
		return nil, atoll.Errorf(atoll.EINVALID, "import needs an ADDRESS and an ID.")
	}
	for _, a := range positional {
		if a == "" || strings.HasPrefix(a, "-") {
			return nil, atoll.Errorf(atoll.EINVALID, "%s is not a resource address or ID: it would be read as a flag.", codeSpan(a))
		}
	}
	args := append(cmd, stepArgs...)
	args = append(args, commentArgs...)
	args = append(args, own...)
	return append(args, positional...), nil
}

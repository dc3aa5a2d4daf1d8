package repocfg

import "gopkg.in/yaml.v3"

// TeamAuthz is the server config's team_authz: an external command that
// decides who may run which comment command, Atlantis's external team
// authorizer. The runner runs Command with Args, then the command name,
// the repository's owner/name and the user's teams as owner/team; the
// last line of its output "pass" (any case) allows.
type TeamAuthz struct {
	Command string
	Args    []string
}

// teamAuthz decodes team_authz: command (required) and args.
func (d *decoder) teamAuthz(n *yaml.Node, path string) (*TeamAuthz, error) {
	fs, err := d.fields(n, path)
	if err != nil {
		return nil, err
	}
	t := &TeamAuthz{}
	for _, f := range fs {
		fp := join(path, f.name)
		if isNull(f.val) {
			continue
		}
		switch f.name {
		case "command":
			t.Command, err = d.str(f.val, fp)
		case "args":
			t.Args, err = d.strList(f.val, fp, nil)
		default:
			err = d.unknownKey(f, path)
		}
		if err != nil {
			return nil, err
		}
	}
	if t.Command == "" {
		return nil, d.errorf(n, join(path, "command"), "is required (the path of the authorization command)")
	}
	return t, nil
}

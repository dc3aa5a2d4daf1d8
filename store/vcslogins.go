package store

import (
	"context"
	"strings"

	"github.com/atollhq/atoll"
)

// SetUserVCSLogins replaces the VCS logins of user id, normalized
// (atoll.NormalizeVCSLogins: EINVALID names a bad one).
func (tx *Tx) SetUserVCSLogins(id int64, logins []string) error {
	logins, err := atoll.NormalizeVCSLogins(logins)
	if err != nil {
		return err
	}
	return tx.updateUser(id, "vcs logins", `UPDATE users SET vcs_logins = ? WHERE id = ?`, strings.Join(logins, " "))
}

// SetUserVCSLogins replaces the VCS logins of user id as an admin's change
// ("user.vcs_logins").
func (db *DB) SetUserVCSLogins(ctx context.Context, id int64, logins []string, actor, source string) error {
	return db.adminChange(ctx, actor, source, "user.vcs_logins", func(tx *Tx) (string, error) {
		name, err := tx.userName(id)
		if err != nil {
			return "", err
		}
		if err := tx.SetUserVCSLogins(id, logins); err != nil {
			return "", err
		}
		a, err := accountWhere(tx.ctx, tx.tx, name, `id = ?`, id)
		if err != nil {
			return "", err
		}
		return name + ": " + loginList(a.VCSLogins), nil
	})
}

func loginList(logins []string) string {
	if len(logins) == 0 {
		return "none"
	}
	return strings.Join(logins, ", ")
}

// addOIDCVCSLogins adds to account a the logins an OIDC provider's claim
// gave that it lacks, with an audit event when there are any. Values that
// are not logins are skipped (they could name no author), as are those
// beyond atoll.MaxVCSLogins: a sign-in never fails for the claim.
func (tx *Tx) addOIDCVCSLogins(a *atoll.Account, claimed []string) error {
	have := a.VCSLogins
	var added []string
	for _, l := range claimed {
		l = strings.TrimSpace(l)
		if !atoll.ValidVCSLogin(l) || len(have) >= atoll.MaxVCSLogins || containsFold(have, l) {
			continue
		}
		have = append(have, l)
		added = append(added, l)
	}
	if len(added) == 0 {
		return nil
	}
	if err := tx.SetUserVCSLogins(a.ID, have); err != nil {
		return err
	}
	a.VCSLogins = have
	return tx.AddEvent(atoll.Event{Actor: a.Name, Action: "user.vcs_logins",
		Detail: a.Name + ": added " + strings.Join(added, ", ") + " from the OIDC provider's claim", Source: "oidc"})
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// identities are the names under which approvals know who: name itself
// (an Atoll account's name or a VCS login) and the VCS logins of every
// account called name (ignoring case, as the other comparisons do).
func (tx *Tx) identities(name string) ([]string, error) {
	out := []string{name}
	rows, err := tx.query(`SELECT vcs_logins FROM users WHERE name = ? COLLATE NOCASE`, name)
	logins, err := collect(rows, err, "vcs logins of "+name, func(s scanner) (string, error) {
		var l string
		return l, s.Scan(&l)
	})
	if err != nil {
		return nil, err
	}
	for _, l := range logins {
		for _, f := range strings.Fields(l) {
			if !containsFold(out, f) {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// sharedIdentity returns a name a and b share (ignoring case), a's
// spelling, if any.
func sharedIdentity(a, b []string) (string, bool) {
	for _, x := range a {
		if containsFold(b, x) {
			return x, true
		}
	}
	return "", false
}

// approverRefusal is why user may not approve plan p, or nil: the pull
// request's author never may, and with fourEyes (--approval-four-eyes)
// neither may the plan's trigger. Each is recognised by its name and the
// VCS logins of the Atoll account of that name, the approver by its
// account name and VCS logins: a GitHub login matches the account it is
// mapped to, and an account matches itself. This is the one place the
// rule lives: every way of approving goes through DecidePlan.
func (tx *Tx) approverRefusal(p *atoll.PlanRef, user string, fourEyes bool) error {
	me, err := tx.identities(user)
	if err != nil {
		return err
	}
	// as says how other (the author, the trigger) is the approver, who
	// share the name shared.
	as := func(other, shared string) string {
		switch {
		case strings.EqualFold(other, user):
			return ""
		case strings.EqualFold(other, shared):
			return " as " + other + ", one of your VCS logins"
		}
		return " as " + other + " (the same person through " + shared + ")"
	}
	if p.PullAuthor != "" {
		author, err := tx.identities(p.PullAuthor)
		if err != nil {
			return err
		}
		if name, ok := sharedIdentity(me, author); ok {
			return atoll.Errorf(atoll.EFORBIDDEN, "You opened this pull request%s: someone else must approve its plans.", as(p.PullAuthor, name))
		}
	}
	if fourEyes && p.Trigger != "" {
		trigger, err := tx.identities(p.Trigger)
		if err != nil {
			return err
		}
		if name, ok := sharedIdentity(me, trigger); ok {
			return atoll.Errorf(atoll.EFORBIDDEN, "You triggered this plan%s; with four-eyes approval another person must approve it.", as(p.Trigger, name))
		}
	}
	return nil
}

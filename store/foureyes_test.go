package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// triggeredPlan stores a plan of project for pull whose plan job was run by
// user (a VCS login for a comment, an account for the dashboard or API).
func triggeredPlan(t *testing.T, db *store.DB, pullID, projectID int64, user string) *atoll.Plan {
	t.Helper()
	var plan *atoll.Plan
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		job := &atoll.Job{Kind: atoll.JobPlan, PullID: pullID, ProjectID: projectID, HeadSHA: "abc", User: user}
		if err := tx.InsertJob(job); err != nil {
			return err
		}
		plan = &atoll.Plan{JobID: job.ID, PullID: pullID, ProjectID: projectID, HeadSHA: "abc", File: []byte("plan " + user), ShowJSON: []byte("{}")}
		return tx.InsertPlan(plan)
	})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// account creates an operator account with the given VCS logins, set as an
// admin would.
func account(t *testing.T, db *store.DB, name, source string, logins ...string) *atoll.Account {
	t.Helper()
	ctx := context.Background()
	nu := atoll.NewUser{Name: name, Role: atoll.RoleOperator, Source: source}
	if source == atoll.UserSourceOIDC {
		nu.OIDCSubject = "iss " + name
	}
	u, err := db.CreateUser(ctx, nu, "adam", "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(logins) > 0 {
		if err := db.SetUserVCSLogins(ctx, u.ID, logins, "adam", "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}
	a, err := db.UserByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// approveAs approves plan as user, with or without --approval-four-eyes.
func approveAs(db *store.DB, planID int64, user string, fourEyes bool) (*atoll.Approval, error) {
	return db.DecidePlan(context.Background(), atoll.PlanDecision{PlanID: planID, Decision: atoll.DecisionApprove, User: user,
		Source: "10.1.2.3", FourEyes: fourEyes})
}

// refusedWith fails the test unless err is EFORBIDDEN with exactly msg and
// the plan has no decision.
func refusedWith(t *testing.T, db *store.DB, planID int64, err error, msg string) {
	t.Helper()
	if atoll.ErrorCode(err) != atoll.EFORBIDDEN || atoll.ErrorMessage(err) != msg {
		t.Fatalf("approval = %v, want EFORBIDDEN %q", err, msg)
	}
	if d, err := db.PlanDecision(context.Background(), planID); err != nil || d != nil {
		t.Fatalf("a refused approval was stored: %+v, %v", d, err)
	}
}

const triggerRefusal = "You triggered this plan; with four-eyes approval another person must approve it."

// With --approval-four-eyes the user who ran a plan (here from the
// dashboard or the API: an Atoll account) cannot approve it, and the
// refusal writes nothing; someone else can, and the trigger may still
// reject. Without the option the trigger may approve, as before.
func TestSecurityFourEyesApproval(t *testing.T) {
	db := storetest.Open(t)
	f := seed(t, db, 1) // opened by alice
	takeLock(t, db, f.projectID, f.pullID)
	plan := triggeredPlan(t, db, f.pullID, f.projectID, "olivia")

	_, before := counts(t, db, plan.ID)
	_, err := approveAs(db, plan.ID, "olivia", true)
	refusedWith(t, db, plan.ID, err, triggerRefusal)
	// Names are compared without case, as the author's always were.
	_, err = approveAs(db, plan.ID, "OLIVIA", true)
	refusedWith(t, db, plan.ID, err, triggerRefusal)
	if _, after := counts(t, db, plan.ID); after != before {
		t.Fatalf("refused approvals recorded %d audit events", after-before)
	}

	// The trigger may still say no.
	if _, err := db.DecidePlan(context.Background(), atoll.PlanDecision{PlanID: plan.ID, Decision: atoll.DecisionReject,
		User: "olivia", Reason: "wrong region", FourEyes: true}); err != nil {
		t.Fatalf("the trigger rejects: %v", err)
	}
	// A second person approves.
	if a, err := approveAs(db, plan.ID, "bob", true); err != nil || a.User != "bob" {
		t.Fatalf("another operator approves: %+v, %v", a, err)
	}

	// Without the option (the default) the trigger approves its own plan.
	plan2 := triggeredPlan(t, db, f.pullID, f.projectID, "olivia")
	if a, err := approveAs(db, plan2.ID, "olivia", false); err != nil || a.User != "olivia" {
		t.Fatalf("the trigger approves without four-eyes: %+v, %v", a, err)
	}
}

// A plan run by a pull request comment has a VCS login as its trigger: the
// account the login is mapped to cannot approve it, whatever it is called;
// an account without that login can. The mapping works both ways: a plan
// run from the dashboard by one account is refused to another account of
// the same person (sharing a VCS login).
func TestSecurityFourEyesMappedTrigger(t *testing.T) {
	db := storetest.Open(t)
	f := seed(t, db, 1)
	takeLock(t, db, f.projectID, f.pullID)
	account(t, db, "olivia@example.com", atoll.UserSourceOIDC, "octo-olivia")
	account(t, db, "olivia-local", atoll.UserSourceLocal, "Octo-Olivia")
	account(t, db, "bob@example.com", atoll.UserSourceOIDC, "octo-bob")

	byComment := triggeredPlan(t, db, f.pullID, f.projectID, "octo-olivia")
	_, err := approveAs(db, byComment.ID, "olivia@example.com", true)
	refusedWith(t, db, byComment.ID, err,
		"You triggered this plan as octo-olivia, one of your VCS logins; with four-eyes approval another person must approve it.")
	if _, err := approveAs(db, byComment.ID, "bob@example.com", true); err != nil {
		t.Fatalf("an account without the trigger's login approves: %v", err)
	}

	byDashboard := triggeredPlan(t, db, f.pullID, f.projectID, "olivia-local")
	_, err = approveAs(db, byDashboard.ID, "olivia@example.com", true)
	refusedWith(t, db, byDashboard.ID, err,
		"You triggered this plan as olivia-local (the same person through octo-olivia); with four-eyes approval another person must approve it.")
	if _, err := approveAs(db, byDashboard.ID, "bob@example.com", true); err != nil {
		t.Fatalf("another person approves: %v", err)
	}
}

// The pull request's author is recognised through the approver's VCS
// logins, with or without four-eyes: an OIDC account named by e-mail whose
// login (from the provider's claim) is the author's cannot approve, nor
// can an account an admin mapped to the author's login. Others can.
func TestSecurityMappedAuthorCannotApprove(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1) // opened by alice
	takeLock(t, db, f.projectID, f.pullID)
	plan := triggeredPlan(t, db, f.pullID, f.projectID, "carol")
	const authorRefusal = "You opened this pull request as alice, one of your VCS logins: someone else must approve its plans."

	// Signed in through OIDC, named by e-mail; the claim gives the login.
	oidcUser, err := db.OIDCUser(ctx, atoll.OIDCSignIn{Subject: "https://idp alice-sub", Name: "alice@example.com", VCSLogins: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, fourEyes := range []bool{false, true} {
		_, err = approveAs(db, plan.ID, oidcUser.Name, fourEyes)
		refusedWith(t, db, plan.ID, err, authorRefusal)
	}

	// Mapped by an admin (any case).
	local := account(t, db, "al", atoll.UserSourceLocal, "ALICE")
	_, err = approveAs(db, plan.ID, local.Name, false)
	refusedWith(t, db, plan.ID, err, "You opened this pull request as alice, one of your VCS logins: someone else must approve its plans.")

	// The plain name match stays.
	_, err = approveAs(db, plan.ID, "Alice", false)
	refusedWith(t, db, plan.ID, err, "You opened this pull request: someone else must approve its plans.")

	if _, err := approveAs(db, plan.ID, "bob", true); err != nil {
		t.Fatalf("someone else approves: %v", err)
	}
}

// VCS logins: an admin sets them (normalized, audited, refused whole when
// one is not a login), and an OIDC sign-in adds the claim's logins it
// lacks without dropping the admin's.
func TestUserVCSLogins(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	a := account(t, db, "dana@example.com", atoll.UserSourceOIDC)
	if len(a.VCSLogins) != 0 {
		t.Fatalf("a new account has logins %q", a.VCSLogins)
	}
	if err := db.SetUserVCSLogins(ctx, a.ID, []string{" dana ", "", "DANA", `CORP\dana`, "dana@corp.example"}, "adam", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	got, _ := db.UserByID(ctx, a.ID)
	if want := []string{"dana", `CORP\dana`, "dana@corp.example"}; !slices.Equal(got.VCSLogins, want) {
		t.Fatalf("logins = %q, want %q", got.VCSLogins, want)
	}
	evs, err := db.AuditEvents(ctx, atoll.EventFilter{Action: "user.vcs_logins"})
	if err != nil || len(evs) != 1 || evs[0].Actor != "adam" || evs[0].Detail != `dana@example.com: dana, CORP\dana, dana@corp.example from 10.0.0.1` {
		t.Fatalf("events = %+v, %v", evs, err)
	}

	for _, bad := range [][]string{{"dana", "two words"}, {"a,b"}, {"<script>"}, {"x\x00"}} {
		if err := db.SetUserVCSLogins(ctx, a.ID, bad, "adam", "10.0.0.1"); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("logins %q: %v, want EINVALID", bad, err)
		}
	}
	if got, _ := db.UserByID(ctx, a.ID); len(got.VCSLogins) != 3 {
		t.Fatalf("refused changes changed the logins to %q", got.VCSLogins)
	}
	if err := db.SetUserVCSLogins(ctx, 999999, []string{"x"}, "adam", "10.0.0.1"); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("logins of a missing user: %v", err)
	}

	// OIDC: the claim's logins are added, the admin's stay, values that
	// are not logins are skipped, and nothing new means no event.
	signIn := func(logins ...string) {
		t.Helper()
		if _, err := db.OIDCUser(ctx, atoll.OIDCSignIn{Subject: "iss dana@example.com", Name: "dana@example.com", VCSLogins: logins}); err != nil {
			t.Fatal(err)
		}
	}
	signIn("dana-gh", "not a login", "Dana")
	got, _ = db.UserByID(ctx, a.ID)
	if want := []string{"dana", `CORP\dana`, "dana@corp.example", "dana-gh"}; !slices.Equal(got.VCSLogins, want) {
		t.Fatalf("logins after OIDC sign-in = %q, want %q", got.VCSLogins, want)
	}
	signIn("dana-gh")
	evs, _ = db.AuditEvents(ctx, atoll.EventFilter{Action: "user.vcs_logins"})
	if len(evs) != 2 || evs[0].Actor != "dana@example.com" || evs[0].Detail != "dana@example.com: added dana-gh from the OIDC provider's claim" {
		t.Fatalf("events after OIDC sign-ins = %+v", evs)
	}
	// Clearing them.
	if err := db.SetUserVCSLogins(ctx, a.ID, nil, "adam", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.UserByID(ctx, a.ID); len(got.VCSLogins) != 0 {
		t.Fatalf("cleared logins = %q", got.VCSLogins)
	}
}

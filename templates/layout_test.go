package templates

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
)

// The freeze banner on every page reads as one sentence.
func TestFreezeBanner(t *testing.T) {
	cases := []struct {
		freeze atoll.Freeze
		want   string
	}{
		{atoll.Freeze{On: true, By: "admin", Reason: "release week"}, "Applies are frozen by admin: release week."},
		{atoll.Freeze{On: true, By: "admin"}, "Applies are frozen by admin."},
		{atoll.Freeze{On: true}, "Applies are frozen."},
	}
	for _, c := range cases {
		var b strings.Builder
		m := Meta{User: &atoll.User{Name: "olivia", Role: atoll.RoleOperator}, Freeze: c.freeze}
		if err := Locks(LocksPage{Meta: m}).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		want := `<div class="banner banner-freeze" role="status">` + c.want + `</div>`
		if !strings.Contains(b.String(), want) {
			t.Errorf("freeze %+v: page has no %s:\n%s", c.freeze, want, b.String())
		}
	}
	var b strings.Builder
	if err := Locks(LocksPage{Meta: Meta{User: &atoll.User{Name: "olivia"}}}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "banner-freeze") {
		t.Error("a banner without a freeze")
	}
}

// The overview's node section says who froze applies, since when and why,
// without a space before the reason's colon.
func TestOverviewFreeze(t *testing.T) {
	now := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	m := Meta{Now: now, User: &atoll.User{Name: "olivia", Role: atoll.RoleOperator},
		Freeze: atoll.Freeze{On: true, By: "admin", Reason: "release week", Since: now.Add(-3 * time.Minute)}}
	var b strings.Builder
	if err := OverviewSection("node", OverviewPage{Meta: m}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\s+`).ReplaceAllString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(b.String(), ""), " ")
	if !strings.Contains(text, "frozen by admin 3 min ago: release week") {
		t.Errorf("overview's freeze reads %q", text)
	}
}

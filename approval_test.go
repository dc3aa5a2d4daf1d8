package atoll_test

import (
	"testing"
	"time"

	"github.com/atollhq/atoll"
)

// The freeze's refusal is the one the runner's comment, the API and the
// store's last check before an apply all give.
func TestFreezeRefusal(t *testing.T) {
	if err := (atoll.Freeze{}).Refusal(); err != nil {
		t.Fatalf("refusal with the freeze off = %v", err)
	}
	since := time.Date(2026, 3, 2, 9, 30, 0, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		f    atoll.Freeze
		want string
	}{
		{atoll.Freeze{On: true, By: "root", Reason: "release week", Since: since},
			"Applies are frozen by root since 2026-03-02 08:30 UTC: release week. Plans still run; an admin can lift the freeze in Atoll."},
		{atoll.Freeze{On: true, By: "root", Since: since},
			"Applies are frozen by root since 2026-03-02 08:30 UTC. Plans still run; an admin can lift the freeze in Atoll."},
	} {
		err := tc.f.Refusal()
		if atoll.ErrorCode(err) != atoll.ECONFLICT || atoll.ErrorMessage(err) != tc.want || tc.f.Message() != tc.want {
			t.Errorf("refusal of %+v = %v (%q)\nwant a conflict: %q", tc.f, err, atoll.ErrorMessage(err), tc.want)
		}
	}
}

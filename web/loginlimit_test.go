package web

import (
	"fmt"
	"testing"
	"time"

	"github.com/atollhq/atoll"
)

// A flood of new addresses and names keeps the limiter's maps bounded and
// wipes no count already kept: an address and an account at their limit
// stay refused, and new keys past the bound are limited together.
func TestSecurityLoginLimiterBounded(t *testing.T) {
	var l loginLimiter
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for i := range loginFailures {
		if _, err := l.reserve("192.0.2.1", "admin", now); err != nil {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	refused := 0
	for i := range 2 * (maxLoginAddrs + maxLoginAccounts) {
		if _, err := l.reserve(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), fmt.Sprintf("name-%d", i), now); err != nil {
			refused++
		}
	}
	if len(l.addrs.m) > maxLoginAddrs || len(l.accounts.m) > maxLoginAccounts {
		t.Errorf("%d addresses and %d accounts kept, want at most %d and %d", len(l.addrs.m), len(l.accounts.m), maxLoginAddrs, maxLoginAccounts)
	}
	if refused == 0 {
		t.Error("the flood's new keys past the bound were never limited")
	}
	if _, err := l.reserve("192.0.2.1", "someone", now); atoll.ErrorCode(err) != atoll.ETOOMANY {
		t.Errorf("the guessing address after the flood: %v", err)
	}
	if _, err := l.reserve("192.0.2.2", "admin", now); atoll.ErrorCode(err) != atoll.ETOOMANY {
		t.Errorf("the guessed account after the flood: %v", err)
	}
	// Once the window has passed, all is forgotten.
	if _, err := l.reserve("192.0.2.1", "admin", now.Add(loginWindow)); err != nil {
		t.Errorf("after the window: %v", err)
	}
}

// An IPv6 address counts by its /64, an IPv4-mapped one as IPv4.
func TestSecurityLoginAddressKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7":                   "192.0.2.7",
		"::ffff:192.0.2.7":            "192.0.2.7",
		"2001:db8:1:2::1":             "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff:ff:1": "2001:db8:1:2::/64",
		"fe80::1%eth0":                "fe80::/64",
		"api":                         "api",
	} {
		if got := addressKey(addr); got != want {
			t.Errorf("addressKey(%q) = %q, want %q", addr, got, want)
		}
	}
}

package repocfg_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// driftServer is a server config whose one entry, for repoID, has the
// drift_detection block v (flow style, on line 3).
func driftServer(v string) string {
	return "repos:\n- id: github.com/acme/infra\n  drift_detection: " + v + "\n"
}

func TestDriftDetectionParses(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		want        repocfg.DriftSettings
	}{
		{"all keys", `{enabled: true, schedule: "0 6 * * 1-5", branch: main, projects: ["envs/*", network], remediation: auto}`,
			repocfg.DriftSettings{Enabled: true, Schedule: "0 6 * * 1-5", Branch: "main", Projects: []string{"envs/*", "network"}, Remediation: "auto"}},
		{"defaults", `{enabled: true, schedule: "@daily"}`,
			repocfg.DriftSettings{Enabled: true, Schedule: "@daily", Remediation: "manual"}},
		{"disabled needs no schedule", `{enabled: false}`, repocfg.DriftSettings{Remediation: "manual"}},
		{"enabled absent is false", `{schedule: "@hourly"}`, repocfg.DriftSettings{Schedule: "@hourly", Remediation: "manual"}},
		{"every", `{enabled: true, schedule: "@every 90m", remediation: off}`,
			repocfg.DriftSettings{Enabled: true, Schedule: "@every 90m", Remediation: "off"}},
		{"descriptors", `{enabled: true, schedule: "@midnight", branch: release/1.2, projects: []}`,
			repocfg.DriftSettings{Enabled: true, Schedule: "@midnight", Branch: "release/1.2", Projects: []string{}, Remediation: "manual"}},
		{"nulls are unset", `{enabled: true, schedule: "@weekly", branch: ~, projects: ~, remediation: ~}`,
			repocfg.DriftSettings{Enabled: true, Schedule: "@weekly", Remediation: "manual"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := server(t, driftServer(tc.block))
			got, ok := sc.DriftFor(repoID, "")
			if !ok {
				t.Fatal("DriftFor: not set")
			}
			checkDrift(t, got, tc.want)
			if got.Line != 3 {
				t.Errorf("Line = %d; want 3", got.Line)
			}
		})
	}
	// Not set at all, and an explicit null: no block.
	for _, text := range []string{"repos:\n- id: github.com/acme/infra\n", driftServer("")} {
		sc := server(t, text)
		if d, ok := sc.DriftFor(repoID, "main"); ok {
			t.Errorf("%q: DriftFor = %+v, true; want not set", text, d)
		}
		if sc.HasDrift() {
			t.Errorf("%q: HasDrift", text)
		}
	}
}

// checkDrift compares the exported fields but Line.
func checkDrift(t *testing.T, got, want repocfg.DriftSettings) {
	t.Helper()
	if got.Enabled != want.Enabled || got.Schedule != want.Schedule || got.Branch != want.Branch ||
		!reflect.DeepEqual(got.Projects, want.Projects) || got.Remediation != want.Remediation {
		t.Errorf("drift = %+v; want %+v", got, want)
	}
}

func TestDriftDetectionErrors(t *testing.T) {
	const at = "repos.yaml line 3: repos[0].drift_detection"
	for _, tc := range []struct{ block, want string }{
		// Cron: robfig/cron v3.0.1's ParseStandard's own reasons.
		{`{enabled: true, schedule: "61 * * * *"}`, at + `.schedule: "61 * * * *" is not a cron schedule: end of range (61) above maximum (59): 61`},
		{`{enabled: true, schedule: "* * *"}`, at + `.schedule: "* * *" is not a cron schedule: expected exactly 5 fields, found 3: [* * *]`},
		{`{enabled: true, schedule: "0 0 * * * *"}`, at + `.schedule: "0 0 * * * *" is not a cron schedule: expected exactly 5 fields, found 6: [0 0 * * * *]`},
		{`{enabled: true, schedule: "@sometimes"}`, at + `.schedule: "@sometimes" is not a cron schedule: unrecognized descriptor: @sometimes`},
		{`{enabled: true, schedule: "@every"}`, at + `.schedule: "@every" is not a cron schedule: unrecognized descriptor: @every`},
		{`{enabled: true, schedule: "@every 10s"}`, at + `.schedule: "@every 10s" is not a cron schedule: runs more often than once a minute (@every 10s)`},
		{`{enabled: true, schedule: "0 25 * * *"}`, at + `.schedule: "0 25 * * *" is not a cron schedule: end of range (25) above maximum (23): 25`},
		{`{enabled: true, schedule: ""}`, at + `.schedule: is required when enabled is true (a cron schedule, e.g. "0 6 * * 1-5" or @daily)`},
		{`{enabled: true, schedule: "  "}`, at + `.schedule: is required when enabled is true (a cron schedule, e.g. "0 6 * * 1-5" or @daily)`},
		{`{enabled: true}`, at + `.schedule: is required when enabled is true (a cron schedule, e.g. "0 6 * * 1-5" or @daily)`},
		// Branch.
		{`{enabled: true, schedule: "@daily", branch: -x}`, at + `.branch: "-x" is not a branch name: it must not start with '-'`},
		{`{enabled: true, schedule: "@daily", branch: a..b}`, at + `.branch: "a..b" is not a branch name: it must not contain ".."`},
		{`{enabled: true, schedule: "@daily", branch: "a b"}`, at + `.branch: "a b" is not a branch name: it must not contain ' '`},
		{`{enabled: true, schedule: "@daily", branch: refs/heads/main}`, at + `.branch: "refs/heads/main" is not a branch name: write the branch name, without refs/`},
		{`{enabled: true, schedule: "@daily", branch: main.lock}`, at + `.branch: "main.lock" is not a branch name: it must not be "@" or end with '.' or ".lock"`},
		{`{enabled: true, schedule: "@daily", branch: a/.b}`, at + `.branch: "a/.b" is not a branch name: no part of it may start with '.'`},
		// Projects.
		{`{enabled: true, schedule: "@daily", projects: ["["]}`, at + `.projects[0]: "[" is not a glob: syntax error in pattern`},
		{`{enabled: true, schedule: "@daily", projects: [a, "envs/[a-"]}`, at + `.projects[1]: "envs/[a-" is not a glob: syntax error in pattern`},
		{`{enabled: true, schedule: "@daily", projects: [""]}`, at + `.projects[0]: must not be empty (a glob over project names and dirs, e.g. envs/*)`},
		{`{enabled: true, schedule: "@daily", projects: envs/*}`, at + `.projects: must be a list of strings, got the string "envs/*"`},
		// Remediation.
		{`{enabled: true, schedule: "@daily", remediation: yes}`, at + `.remediation: "yes" is not one of manual, auto, off`},
		{`{enabled: true, schedule: "@daily", remediation: true}`, at + `.remediation: "true" is not one of manual, auto, off`},
		// Unknown keys and wrong types.
		{`{enabled: true, schedule: "@daily", cron: x}`, at + `: unknown key "cron"`},
		{`{enabled: "true", schedule: "@daily"}`, at + `.enabled: must be a boolean (true or false), got the string "true"`},
		{`{enabled: true, schedule: 5}`, at + `.schedule: must be a string, got a number`},
		{`{enabled: true, schedule: [a]}`, at + `.schedule: must be a string, got a list`},
		{`{enabled: true, schedule: "@daily", branch: [main]}`, at + `.branch: must be a string, got a list`},
		{`[x]`, at + `: must be a mapping, got a list`},
		{`true`, at + `: must be a mapping, got a boolean`},
	} {
		t.Run(tc.block, func(t *testing.T) {
			_, err := repocfg.ParseServerConfig("repos.yaml", []byte(driftServer(tc.block)))
			if atoll.ErrorCode(err) != atoll.EINVALID || atoll.ErrorMessage(err) != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
	// An entry's branch regex must serve the drift branch it names.
	_, err := repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n- id: github.com/acme/infra\n  branch: /^main$/\n  drift_detection: {enabled: true, schedule: \"@daily\", branch: dev}\n"))
	if want := `repos.yaml line 4: repos[0].drift_detection.branch: "dev" is not served by the entry: its branch regex /^main$/ does not match it`; atoll.ErrorMessage(err) != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// The last matching entry that sets drift_detection wins, whole: none of an
// earlier entry's keys is inherited; entries for other repositories and
// entries that do not set it change nothing.
func TestDriftForPrecedence(t *testing.T) {
	sc := server(t, `repos:
- id: /.*/
  drift_detection: {enabled: true, schedule: "@daily", branch: main, projects: [envs/*], remediation: auto}
- id: github.com/acme/infra
  drift_detection: {enabled: true, schedule: "0 6 * * 1-5"}
- id: github.com/acme/infra
  workflow: default
- id: github.com/acme/other
  drift_detection: {enabled: false}
`)
	got, ok := sc.DriftFor(repoID, "trunk")
	if !ok {
		t.Fatal("not set")
	}
	checkDrift(t, got, repocfg.DriftSettings{Enabled: true, Schedule: "0 6 * * 1-5", Branch: "trunk", Remediation: "manual"})
	if got, _ := sc.DriftFor("github.com/acme/other", ""); got.Enabled {
		t.Errorf("other: %+v; want disabled", got)
	}
	got, _ = sc.DriftFor("github.com/acme/third", "")
	checkDrift(t, got, repocfg.DriftSettings{Enabled: true, Schedule: "@daily", Branch: "main", Projects: []string{"envs/*"}, Remediation: "auto"})
	if !sc.HasDrift() {
		t.Error("HasDrift = false")
	}
	// A result is a copy: changing it changes the config not.
	got.Projects[0] = "x"
	if again, _ := sc.DriftFor("github.com/acme/third", ""); again.Projects[0] != "envs/*" {
		t.Error("DriftFor shares Projects")
	}
	// Another repository's entry does not apply.
	sc = server(t, "repos:\n- id: github.com/acme/other\n  drift_detection: {enabled: true, schedule: \"@daily\"}\n")
	if d, ok := sc.DriftFor(repoID, ""); ok {
		t.Errorf("DriftFor = %+v; the entry is another repository's", d)
	}
	if !sc.HasDrift() {
		t.Error("HasDrift = false")
	}
	// Disabled everywhere, but a repository may enable it: HasDrift.
	if !server(t, "repos:\n- id: /.*/\n  allowed_overrides: [drift_detection]\n").HasDrift() {
		t.Error("HasDrift = false with allowed_overrides: [drift_detection]")
	}
	if server(t, "repos:\n- id: /.*/\n  drift_detection: {enabled: false, schedule: \"@daily\"}\n").HasDrift() {
		t.Error("HasDrift = true with drift detection disabled")
	}
	if repocfg.DefaultServerConfig().HasDrift() {
		t.Error("default config HasDrift")
	}
}

// atlantis.yaml's top-level drift_detection counts only where the server
// allows drift_detection, replaces the server's block whole, and may never
// turn on remediation: auto.
func TestDriftOverride(t *testing.T) {
	const serverBlock = "  drift_detection: {enabled: true, schedule: \"@daily\", remediation: auto, projects: [envs/*]}\n"
	const allow = "  allowed_overrides: [drift_detection]\n"
	const fileBlock = "version: 3\ndrift_detection:\n  enabled: true\n  schedule: \"0 */4 * * *\"\n  branch: prod\n  remediation: off\nprojects:\n- dir: a\n"
	serverOnly := repocfg.DriftSettings{Enabled: true, Schedule: "@daily", Remediation: "auto", Projects: []string{"envs/*"}}
	fromFile := repocfg.DriftSettings{Enabled: true, Schedule: "0 */4 * * *", Branch: "prod", Remediation: "off"}
	for _, tc := range []struct {
		name, server, file string
		want               *repocfg.DriftSettings
		err                []string
	}{
		{name: "server only", server: "repos:\n- id: /.*/\n" + serverBlock, file: "version: 3\nprojects:\n- dir: a\n", want: &serverOnly},
		{name: "neither", server: "repos:\n- id: /.*/\n", file: "version: 3\nprojects:\n- dir: a\n"},
		{name: "no file", server: "repos:\n- id: /.*/\n" + serverBlock + allow, want: &serverOnly},
		{name: "file where allowed", server: "repos:\n- id: /.*/\n" + serverBlock + allow, file: fileBlock, want: &fromFile},
		{name: "file without a server block", server: "repos:\n- id: /.*/\n" + allow, file: fileBlock, want: &fromFile},
		{name: "file may disable", server: "repos:\n- id: /.*/\n" + serverBlock + allow, file: "version: 3\ndrift_detection: {enabled: false}\n",
			want: &repocfg.DriftSettings{Remediation: "manual"}},
		{name: "file null keeps the server's", server: "repos:\n- id: /.*/\n" + serverBlock, file: "version: 3\ndrift_detection:\n", want: &serverOnly},
		{name: "not allowed", server: "repos:\n- id: /.*/\n" + serverBlock, file: fileBlock,
			err: []string{"atlantis.yaml line 2: drift_detection: the server-side repo config does not allow this repository's config to set drift_detection: it needs `allowed_overrides: [drift_detection]` for the repository"}},
		{name: "allowed for another repository only", server: "repos:\n- id: github.com/acme/other\n" + allow, file: fileBlock,
			err: []string{"allowed_overrides: [drift_detection]"}},
		{name: "no server config", file: fileBlock, err: []string{"allowed_overrides: [drift_detection]"}},
		{name: "auto refused even where allowed", server: "repos:\n- id: /.*/\n" + serverBlock + allow,
			file: "version: 3\ndrift_detection: {enabled: true, schedule: \"@daily\", remediation: auto}\n",
			err:  []string{"atlantis.yaml line 2: drift_detection.remediation: only the server-side repo config may turn on automatic remediation (remediation: auto); a repository's config may set manual or off"}},
		{name: "file checked as strictly", server: "repos:\n- id: /.*/\n" + allow, file: "version: 3\ndrift_detection: {enabled: true, schedule: \"61 * * * *\"}\n",
			err: []string{`atlantis.yaml line 2: drift_detection.schedule: "61 * * * *" is not a cron schedule: end of range (61) above maximum (59): 61`}},
		{name: "file unknown key", server: "repos:\n- id: /.*/\n" + allow, file: "version: 3\ndrift_detection: {enabled: true, schedule: \"@daily\", when: now}\n",
			err: []string{`atlantis.yaml line 2: drift_detection: unknown key "when"`}},
		{name: "not a project key", server: "repos:\n- id: /.*/\n" + allow, file: "version: 3\nprojects:\n- dir: a\n  drift_detection: {enabled: false}\n",
			err: []string{`atlantis.yaml line 4: projects[0]: unknown key "drift_detection"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := repocfg.DefaultServerConfig()
			if tc.server != "" {
				sc = server(t, tc.server)
			}
			files := map[string]string{}
			if tc.file != "" {
				files["atlantis.yaml"] = tc.file
			}
			cfg, err := loadWith(t, sc, repoID, "main", files)
			if tc.err != nil {
				wantInvalid(t, err, tc.err...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == nil && cfg.Drift != nil:
				t.Errorf("Drift = %+v; want nil", cfg.Drift)
			case tc.want != nil && cfg.Drift == nil:
				t.Errorf("Drift = nil; want %+v", tc.want)
			case tc.want != nil:
				checkDrift(t, *cfg.Drift, *tc.want)
			}
		})
	}
}

// Next against times computed by hand from the cron semantics robfig/cron
// v3 documents for its standard parser (https://pkg.go.dev/github.com/robfig/cron/v3,
// "CRON Expression Format" and "Predefined schedules"), which are POSIX
// crontab(5)'s five fields: the first time strictly after the given one
// whose minute, hour, month and day match, the day matching when either of
// a restricted day-of-month or day-of-week does. Schedules are in UTC.
func TestDriftNext(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	for _, tc := range []struct {
		schedule string
		after    time.Time
		want     string
	}{
		// 2026-11-27 is a Friday: after Friday 07:00 the next weekday 06:00 is Monday the 30th.
		{"0 6 * * 1-5", utc("2026-11-27T07:00:00Z"), "2026-11-30T06:00:00Z"},
		// Before 06:00 on a weekday: the same day.
		{"0 6 * * 1-5", utc("2026-11-26T05:59:59Z"), "2026-11-26T06:00:00Z"},
		// Exactly at a firing time: the next one, not the same.
		{"0 6 * * 1-5", utc("2026-11-26T06:00:00Z"), "2026-11-27T06:00:00Z"},
		// @every 90m: 90 minutes after the given time (whole seconds).
		{"@every 90m", utc("2026-11-27T07:00:00Z"), "2026-11-27T08:30:00Z"},
		// @daily is 0 0 * * *: the next midnight in UTC, whatever the
		// given time's zone (07:00 in Paris is 06:00 UTC).
		{"@daily", utc("2026-11-27T07:00:00Z"), "2026-11-28T00:00:00Z"},
		{"@daily", time.Date(2026, 11, 27, 7, 0, 0, 0, paris), "2026-11-28T00:00:00Z"},
		// @hourly is 0 * * * *.
		{"@hourly", utc("2026-11-27T07:30:00Z"), "2026-11-27T08:00:00Z"},
		// @weekly is 0 0 * * 0: Sunday.
		{"@weekly", utc("2026-11-27T07:00:00Z"), "2026-11-29T00:00:00Z"},
		// @monthly is 0 0 1 * *.
		{"@monthly", utc("2026-11-27T07:00:00Z"), "2026-12-01T00:00:00Z"},
		// @yearly is 0 0 1 1 *.
		{"@yearly", utc("2026-11-27T07:00:00Z"), "2027-01-01T00:00:00Z"},
		// Every 15 minutes in business hours.
		{"*/15 9-17 * * *", utc("2026-11-27T17:50:00Z"), "2026-11-28T09:00:00Z"},
		// Day of month or day of week (POSIX): the 1st, or a Monday.
		{"0 12 1 * 1", utc("2026-11-27T00:00:00Z"), "2026-11-30T12:00:00Z"},
	} {
		sc := server(t, driftServer(`{enabled: true, schedule: "`+tc.schedule+`"}`))
		d, _ := sc.DriftFor(repoID, "")
		got, err := d.Next(tc.after)
		if err != nil || !got.Equal(utc(tc.want)) {
			t.Errorf("%s after %s: %v, %v; want %s", tc.schedule, tc.after.Format(time.RFC3339), got, err, tc.want)
		}
		// A DriftSettings written by hand (not parsed) computes the same.
		got, err = repocfg.DriftSettings{Schedule: tc.schedule}.Next(tc.after)
		if err != nil || !got.Equal(utc(tc.want)) {
			t.Errorf("unparsed %s: %v, %v", tc.schedule, got, err)
		}
	}
	if _, err := (repocfg.DriftSettings{}).Next(time.Now()); err == nil {
		t.Error("Next without a schedule: no error")
	}
	if _, err := (repocfg.DriftSettings{Schedule: "61 * * * *"}).Next(time.Now()); err == nil {
		t.Error("Next with a bad schedule: no error")
	}
	// February 30th never comes: an error, not the zero time.
	if _, err := (repocfg.DriftSettings{Schedule: "0 0 30 2 *"}).Next(time.Now()); err == nil {
		t.Error("Next of 0 0 30 2 *: no error")
	}
}

func TestDriftSelects(t *testing.T) {
	d := repocfg.DriftSettings{Projects: []string{"envs/*", "network"}}
	for _, tc := range []struct {
		name, dir string
		want      bool
	}{
		{"", "envs/prod", true},
		{"network", "infra/net", true},
		{"", "network", true},
		{"prod", "envs/prod/eu", false}, // * does not cross '/'
		{"", "modules/x", false},
		{"", ".", false},
	} {
		if got := d.Selects(tc.name, tc.dir); got != tc.want {
			t.Errorf("Selects(%q, %q) = %v; want %v", tc.name, tc.dir, got, tc.want)
		}
	}
	if !(repocfg.DriftSettings{}).Selects("", "anything") {
		t.Error("no projects: not every project selected")
	}
}

package repocfg

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"
)

// KeyDriftDetection is Atoll's own override key (Atlantis has no drift
// schedules): with it in allowed_overrides, the repository's config file
// may set a top-level drift_detection block.
const KeyDriftDetection = "drift_detection"

// Remediation modes of a drift_detection block.
const (
	// RemediationManual (the default): a drifted project is reconciled
	// only when someone asks, and its plan needs an approval.
	RemediationManual = "manual"
	// RemediationAuto: a reconcile needs no approval. Only the
	// server-side repo config may set it.
	RemediationAuto = "auto"
	// RemediationOff: drift is reported, never reconciled.
	RemediationOff = "off"
)

// RemediationModes are the values remediation accepts.
var RemediationModes = []string{RemediationManual, RemediationAuto, RemediationOff}

// minDriftInterval is the shortest @every a schedule may give: a drift
// check plans every project, so more than one a minute is a mistake.
const minDriftInterval = time.Minute

// driftKeys are the keys of a drift_detection block.
var driftKeys = keySet("enabled", "schedule", "branch", "projects", "remediation")

// DriftSettings is a drift_detection block: when and what the scheduled
// drift checks of a repository plan, and how drift may be remediated.
type DriftSettings struct {
	// Enabled turns the schedule on; false when the key is absent.
	Enabled bool
	// Schedule is the cron schedule as written (robfig/cron's standard
	// spec: five fields, or @hourly, @daily, @every 90m, ...), evaluated
	// in UTC unless it starts with CRON_TZ=Zone. Required when Enabled.
	Schedule string
	// Branch is the branch checked; "" is the repository's default branch
	// (DriftFor resolves it when given that branch).
	Branch string
	// Projects are path.Match globs over project names and dirs; empty
	// selects every project.
	Projects []string
	// Remediation is RemediationManual, RemediationAuto or RemediationOff;
	// never "" once parsed.
	Remediation string
	// Line is where the block starts in its file, for messages.
	Line int

	sched cron.Schedule // parsed Schedule; nil when Schedule is ""
}

// Next returns the first time after after at which the schedule fires.
// A schedule without CRON_TZ is evaluated in UTC, whatever after's zone;
// one with CRON_TZ=Zone in that zone. The result is in UTC.
func (s DriftSettings) Next(after time.Time) (time.Time, error) {
	sched := s.sched
	if sched == nil {
		if s.Schedule == "" {
			return time.Time{}, fmt.Errorf("drift detection has no schedule")
		}
		var err error
		if sched, err = parseSchedule(s.Schedule); err != nil {
			return time.Time{}, err
		}
	}
	next := sched.Next(after.UTC())
	if next.IsZero() {
		return time.Time{}, fmt.Errorf("schedule %q never fires after %s", s.Schedule, after.UTC().Format(time.RFC3339))
	}
	return next, nil
}

// Selects reports whether the project (its name, "" when it has none, and
// its dir) is one the block's Projects select: every project when Projects
// is empty, else one whose name or dir matches a glob.
func (s DriftSettings) Selects(name, dir string) bool {
	if len(s.Projects) == 0 {
		return true
	}
	for _, g := range s.Projects {
		if ok, _ := path.Match(g, name); ok && name != "" {
			return true
		}
		if ok, _ := path.Match(g, dir); ok {
			return true
		}
	}
	return false
}

// clone copies s with its own Projects.
func (s DriftSettings) clone() DriftSettings {
	s.Projects = slices.Clone(s.Projects)
	return s
}

// parseSchedule parses a schedule with robfig/cron's standard parser.
func parseSchedule(spec string) (cron.Schedule, error) {
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, err
	}
	if c, ok := sched.(cron.ConstantDelaySchedule); ok && c.Delay < minDriftInterval {
		return nil, fmt.Errorf("runs more often than once a minute (@every %s)", c.Delay)
	}
	return sched, nil
}

// DriftFor returns the drift_detection block of the last server-side entry
// matching the repository id that sets one, and whether one does. The
// block is taken whole: an earlier entry's keys are not inherited (see
// docs/configuration.md). defaultBranch, when not "", is the repository's
// default branch, put in Branch when the block leaves it empty.
func (s *ServerConfig) DriftFor(id, defaultBranch string) (DriftSettings, bool) {
	if s == nil {
		return DriftSettings{}, false
	}
	var found *DriftSettings
	for i := range s.Repos {
		if r := &s.Repos[i]; r.Drift != nil && r.IDMatches(id) {
			found = r.Drift
		}
	}
	if found == nil {
		return DriftSettings{}, false
	}
	out := found.clone()
	if out.Branch == "" {
		out.Branch = defaultBranch
	}
	return out, true
}

// HasDrift reports whether any repository may have scheduled drift
// checks: an entry enables drift_detection, or lets a repository's config
// file set it (allowed_overrides: [drift_detection]). The scheduler skips
// its work when it is false.
func (s *ServerConfig) HasDrift() bool {
	if s == nil {
		return false
	}
	for _, r := range s.Repos {
		if (r.Drift != nil && r.Drift.Enabled) || slices.Contains(r.AllowedOverrides, KeyDriftDetection) {
			return true
		}
	}
	return false
}

// mergeDrift is the drift block in force for the repository id given its
// config file's cfg (nil: none): the file's where the server allows
// drift_detection (set.check refused it otherwise), else the server's;
// nil when neither sets one. Branch is left "" for the default branch.
func (s *ServerConfig) mergeDrift(id string, set serverSettings, cfg *Config) *DriftSettings {
	if cfg != nil && cfg.Drift != nil && set.allowed(KeyDriftDetection) {
		d := cfg.Drift.clone()
		return &d
	}
	if d, ok := s.DriftFor(id, ""); ok {
		return &d
	}
	return nil
}

// driftDetection decodes a drift_detection block. fromRepo is true for a
// repository's config file, which may not set remediation: auto.
func (d *decoder) driftDetection(f field, p string, fromRepo bool) (*DriftSettings, error) {
	fs, err := d.fields(f.val, p)
	if err != nil {
		return nil, err
	}
	out := &DriftSettings{Remediation: RemediationManual, Line: f.key.Line}
	for _, df := range fs {
		fp := join(p, df.name)
		if !driftKeys[df.name] {
			return nil, d.unknownKey(df, p)
		}
		if isNull(df.val) {
			continue // unset: the default
		}
		switch df.name {
		case "enabled":
			out.Enabled, err = d.boolean(df.val, fp)
		case "schedule":
			if out.Schedule, err = d.text(df.val, fp); err == nil {
				out.Schedule = strings.TrimSpace(out.Schedule)
				if out.Schedule != "" {
					if out.sched, err = parseSchedule(out.Schedule); err != nil {
						err = d.errorf(resolve(df.val), fp, "%q is not a cron schedule: %v", out.Schedule, err)
					}
				}
			}
		case "branch":
			if out.Branch, err = d.str(df.val, fp); err == nil {
				err = d.check(df.val, fp, out.Branch, checkDriftBranch)
			}
		case "projects":
			out.Projects, err = d.strList(df.val, fp, func(item *yaml.Node, ip, s string) error {
				if s == "" {
					return d.errorf(item, ip, "must not be empty (a glob over project names and dirs, e.g. envs/*)")
				}
				if _, err := path.Match(s, ""); err != nil {
					return d.errorf(item, ip, "%q is not a glob: %v", s, err)
				}
				return nil
			})
		case "remediation":
			if out.Remediation, err = d.str(df.val, fp); err == nil {
				if err = d.check(df.val, fp, out.Remediation, oneOf(RemediationModes)); err == nil && fromRepo && out.Remediation == RemediationAuto {
					err = d.errorf(resolve(df.val), fp, "only the server-side repo config may turn on automatic remediation (remediation: auto); a repository's config may set manual or off")
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if out.Enabled && out.Schedule == "" {
		return nil, d.errorf(resolve(f.val), join(p, "schedule"), "is required when enabled is true (a cron schedule, e.g. \"0 6 * * 1-5\" or @daily)")
	}
	return out, nil
}

// checkDriftBranch is a git-safe branch name rule for drift_detection's
// branch (package drift's CheckBaseBranch is the API's; repocfg may not
// import drift): "" (the default branch) or a name git accepts for a
// branch, written without refs/heads/, that cannot be taken for an option.
func checkDriftBranch(b string) error {
	bad := func(why string) error { return fmt.Errorf("%q is not a branch name: %s", b, why) }
	switch {
	case b == "":
		return nil
	case strings.HasPrefix(b, "-"):
		return bad("it must not start with '-'")
	case strings.HasPrefix(b, "refs/"):
		return bad("write the branch name, without refs/")
	case strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/"):
		return bad("it must not start or end with '/'")
	case b == "@" || strings.HasSuffix(b, ".") || strings.HasSuffix(b, ".lock"):
		return bad(`it must not be "@" or end with '.' or ".lock"`)
	}
	for _, r := range b {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return bad(fmt.Sprintf("it must not contain %q", r))
		}
	}
	for _, s := range []string{"..", "@{", "//"} {
		if strings.Contains(b, s) {
			return bad(fmt.Sprintf("it must not contain %q", s))
		}
	}
	for _, c := range strings.Split(b, "/") {
		if strings.HasPrefix(c, ".") {
			return bad("no part of it may start with '.'")
		}
	}
	return nil
}

// AllowsDriftOverride reports whether the repository's own config file may
// set drift_detection (allowed_overrides: [drift_detection] in the last
// matching entry that sets allowed_overrides).
func (s *ServerConfig) AllowsDriftOverride(id string) bool {
	if s == nil {
		return false
	}
	return s.settings(id).allowed(KeyDriftDetection)
}

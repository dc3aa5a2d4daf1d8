package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll/runner"
)

func noEnv(string) string { return "" }

// The table is consistent: one entry per name and variable, every secret
// with its -file variant, every default accepted by its own check and read
// back as itself, and the flag set, the usage and the table agree.
func TestFlagTable(t *testing.T) {
	var c Config
	opts := c.options()
	files := map[string]*string{}
	fs := c.flagSet("atoll server", opts, files)
	names, envs := map[string]bool{}, map[string]bool{}
	claim := func(name string) {
		if names[name] {
			t.Errorf("--%s is registered twice", name)
		}
		names[name] = true
		if env := envName(name); envs[env] {
			t.Errorf("%s is read for two flags", env)
		} else {
			envs[env] = true
		}
	}
	var usage bytes.Buffer
	printUsage(&usage, opts)
	for _, o := range opts {
		claim(o.name)
		if o.env != envName(o.name) || o.env != "ATOLL_"+strings.ToUpper(strings.ReplaceAll(o.name, "-", "_")) {
			t.Errorf("--%s: env %s", o.name, o.env)
		}
		if o.usage == "" {
			t.Errorf("--%s has no usage", o.name)
		}
		if o.alias != "" {
			claim(o.alias)
		}
		if o.secret {
			claim(o.name + "-file")
			if fs.Lookup(o.name+"-file") == nil || files[o.name] == nil {
				t.Errorf("secret --%s has no --%s-file", o.name, o.name)
			}
			if o.value.String() != "" || o.value.defaultText() != "" {
				t.Errorf("secret --%s has a default", o.name)
			}
		}
		if fs.Lookup(o.name) == nil {
			t.Errorf("--%s is not registered", o.name)
		}
		if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(o.name) + `( |$)`).Match(usage.Bytes()) {
			t.Errorf("--%s is not in the usage", o.name)
		}
		if err := o.value.check(); err != nil {
			t.Errorf("--%s: its default fails its check: %v", o.name, err)
		}
		if d := o.value.String(); d != "" {
			if err := o.value.Set(d); err != nil || o.value.String() != d {
				t.Errorf("--%s: its default %q reads back as %q (%v)", o.name, d, o.value.String(), err)
			}
		}
		if _, isBool := o.value.(*field[bool]); isBool != o.value.IsBoolFlag() {
			t.Errorf("--%s: IsBoolFlag %v", o.name, o.value.IsBoolFlag())
		}
	}
	count := 0
	fs.VisitAll(func(f *flag.Flag) {
		count++
		if !names[f.Name] {
			t.Errorf("--%s is registered outside the table", f.Name)
		}
	})
	if count != len(names) {
		t.Errorf("%d flags registered, %d names in the table", count, len(names))
	}

	// The defaults are the fields' values of a new Main.
	m := NewMain()
	if m.Config.Port != 4141 || m.Config.TFDistribution != "terraform" || !m.Config.EnableDiffMarkdownFormat ||
		strings.Join(m.Config.AllowCommands, ",") != "version,plan,apply,unlock,approve_policies,cancel" || m.Config.Retention.Events != 365*24*time.Hour {
		t.Errorf("NewMain's defaults: %+v", m.Config)
	}
}

// A bad value stops the server at start with an error that names the flag
// (or, from the environment, the variable), whether the flag's parser or
// its check refuses it. Every entry that can refuse a value has a case.
func TestFlagBadValues(t *testing.T) {
	bad := map[string]string{
		"port":                   "70000",
		"parallelism":            "0",
		"executable-name":        "two words",
		"checkout-strategy":      "rebase",
		"admin-password":         "short",
		"automerge-method":       "fast-forward",
		"vcs-status-name":        "a/b",
		"plan-approval":          "[",
		"approval-ttl":           "-1h",
		"retain-logs":            "-1h",
		"retain-webhooks":        "-1h",
		"retain-events":          "-1h",
		"retain-plan-files":      "-1h",
		"autodiscover-mode":      "sometimes",
		"autoplan-file-list":     "**/*.tf,[a",
		"allow-commands":         "plan,policy_check",
		"blocked-extra-args":     "target",
		"emoji-reaction":         "thumbsup",
		"gh-team-allowlist":      "ops",
		"repo-config":            "/nonexistent/repos.yaml",
		"repo-config-json":       `{"repos":[{"id":"/.*/","workflow":"nope"}]}`,
		"tf-distribution":        "terraform2",
		"log-level":              "verbose",
		"default-execution-pool": "GPU pool",
		"kube-schedule-timeout":  "10ms",
		"drift-tick":             "500ms",
	}
	var c Config
	for _, o := range c.options() {
		v, ok := bad[o.name]
		switch o.value.(type) {
		case *field[bool]:
			v, ok = "maybe", true
		case *field[int], *field[int64], *field[time.Duration]:
			if !ok {
				v, ok = "lots", true
			}
		}
		if !ok {
			// Its parser only makes the directories absolute.
			if refuses(o.value) && o.name != "var-file-allowlist" {
				t.Errorf("--%s can refuse a value: give it a case here", o.name)
			}
			continue
		}
		t.Run(o.name, func(t *testing.T) {
			base := []string{"--repo-allowlist", "github.com/acme/*"}
			var c Config
			err := c.Parse(append(base, "--"+o.name+"="+v), noEnv)
			if err == nil || !strings.Contains(err.Error(), "-"+o.name) {
				t.Errorf("--%s=%s: %v; want an error naming the flag", o.name, v, err)
			}
			var stderr bytes.Buffer
			if code := exitCode(err, &stderr); code == 0 {
				t.Errorf("exit code 0")
			} else if s := stderr.String(); s != "" && (!strings.HasPrefix(s, "atoll: ") || strings.Count(s, "\n") != 1 || !strings.Contains(s, "--"+o.name)) {
				t.Errorf("stderr %q; want one line naming --%s", s, o.name)
			}
			if o.secret && err != nil && strings.Contains(err.Error(), v) {
				t.Errorf("the error shows the secret: %v", err)
			}
			c = Config{}
			err = c.Parse(base, func(k string) string {
				if k == o.env {
					return v
				}
				return ""
			})
			if err == nil || !strings.Contains(err.Error(), o.env) && !strings.Contains(err.Error(), "--"+o.name) {
				t.Errorf("%s=%s: %v; want an error naming the variable or the flag", o.env, v, err)
			}
		})
	}
}

// refuses reports whether a binding can refuse a value: it has a check,
// or a parser of its own.
func refuses(b binding) bool {
	switch f := b.(type) {
	case *field[string]:
		return f.valid != nil || f.kind == "value"
	case *field[int]:
		return true
	case *field[int64]:
		return true
	case *field[time.Duration]:
		return true
	case *field[bool]:
		return true
	case *field[[]string]:
		return true
	case *field[runner.TeamAllowlist]:
		return true
	}
	panic(fmt.Sprintf("refuses: a binding of type %T", b))
}

// docs/configuration.md's reference of every flag and its list of secrets
// are generated from the table (ATOLL_UPDATE_DOCS=1 rewrites them), and the
// Env column of its hand-written tables names each flag's variable.
func TestFlagReference(t *testing.T) {
	const doc = "../../docs/configuration.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	opts := c.options()
	c.setDefaults()
	// `atoll worker` has a table of its own.
	var wc workerConfig
	workerOpts := wc.options()
	for _, o := range workerOpts {
		o.value.reset()
	}
	updated := string(b)
	for _, block := range []struct{ name, want string }{
		{"secrets", secretsList(opts)},
		{"flags", flagReference(opts)},
		{"worker-flags", flagReference(workerOpts)},
	} {
		begin := "<!-- " + block.name + ":begin (generated by TestFlagReference) -->\n"
		end := "<!-- " + block.name + ":end -->"
		i, j := strings.Index(updated, begin), strings.Index(updated, end)
		if i < 0 || j < i {
			t.Fatalf("%s has no generated %s between %q and %q", doc, block.name, begin, end)
		}
		updated = updated[:i+len(begin)] + block.want + updated[j:]
	}
	if updated != string(b) {
		if os.Getenv("ATOLL_UPDATE_DOCS") == "" {
			t.Errorf("%s's flag reference is not the one the table generates; rerun with ATOLL_UPDATE_DOCS=1", doc)
		} else if err := os.WriteFile(doc, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	env := map[string]string{}
	for _, o := range opts {
		env[o.name] = o.env
	}
	row := regexp.MustCompile("(?m)^\\| (`--[a-z0-9-]+`(?:, `--[a-z0-9-]+`)*) \\| ([^|]*) \\|")
	flagName := regexp.MustCompile("`--([a-z0-9-]+)`")
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		if !strings.Contains(m[2], "`ATOLL_") {
			continue // a table without the Env column
		}
		for _, f := range flagName.FindAllStringSubmatch(m[1], -1) {
			if want, ok := env[f[1]]; ok && !strings.Contains(m[2], "`"+want+"`") {
				t.Errorf("%s: the row of --%s names %s, not %s", doc, f[1], strings.TrimSpace(m[2]), want)
			}
		}
	}
}

// secretsList is the sentence that lists the secret flags.
func secretsList(opts []option) string {
	var names []string
	for _, o := range opts {
		if o.secret {
			names = append(names, "`--"+o.name+"`")
		}
	}
	return "The secret flags " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] +
		" can also be read from a file, which keeps them out of the process's command line (visible to every local user in `ps`): " +
		"`--gh-token-file /run/secrets/gh-token`, or `ATOLL_GH_TOKEN_FILE=/run/secrets/gh-token` in the environment.\n"
}

// flagReference is the table of every flag: its variable, its default and
// its usage, as `atoll server -h` says it.
func flagReference(opts []option) string {
	var b strings.Builder
	b.WriteString("| Flag | Env | Default | Usage |\n|---|---|---|---|\n")
	for _, o := range opts {
		name := "`--" + o.name + "`"
		if o.alias != "" {
			name += " (Atlantis: `--" + o.alias + "`)"
		}
		env := "`" + o.env + "`"
		if o.secret {
			name += ", `--" + o.name + "-file`"
			env += ", `" + o.env + "_FILE`"
		}
		def := ""
		if d := o.value.String(); d != "" && !o.secret {
			def = "`" + d + "`"
		}
		usage := strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;", "*", "\\*").Replace(o.usage)
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, env, def, usage)
	}
	return b.String()
}

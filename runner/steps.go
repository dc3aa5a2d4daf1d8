package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/terraform"
)

// steps runs one stage of a custom workflow, its steps in order, in a
// project dir that is checked out. The steps share an environment: what
// env and multienv steps set reaches every later step, Terraform's too.
type steps struct {
	x        *execution
	j        *atoll.Job
	sink     executor.LogSink
	dir      string
	planFile string
	env      []string // KEY=VALUE from env and multienv steps, in order
	outputs  []string // what the comment shows, one entry per step
	// planText is the output of the plan step that wrote the plan file,
	// or "" once a later step might have written it again.
	planText string
}

func (x *execution) newSteps(dir, planFile string) *steps {
	return &steps{x: x, j: x.j, sink: x.sink, dir: dir, planFile: planFile}
}

// output is the steps' output for the comment, as Atlantis joins it.
func (s *steps) output() string { return strings.Join(s.outputs, "\n") }

// terraform is the job's Terraform runner with the steps' environment.
func (s *steps) terraform() terraform.Runner {
	tf := s.x.tf
	tf.Env = append(append([]string{}, tf.Env...), s.env...)
	return tf
}

// initFirst reports whether a stage must be initialised before its steps
// run: when it has no init step. Atlantis would not init at all, but
// checkouts are pooled and jobs move between nodes, so no earlier init can
// be relied on (init is skipped when provably up to date).
func initFirst(list []atoll.Step) bool {
	return list == nil || !slices.ContainsFunc(list, func(st atoll.Step) bool { return st.Name == "init" })
}

// run runs the steps in order and stops at the first failure.
func (s *steps) run(ctx context.Context, list []atoll.Step) error {
	for _, st := range list {
		var err error
		switch st.Name {
		case "init":
			err = s.x.initProject(ctx, s.terraform(), s.dir, st.ExtraArgs)
		case "plan":
			err = s.plan(ctx, st)
		case "show":
			err = s.show(ctx)
		case "apply":
			err = s.apply(ctx, st)
		case "import", "state_rm":
			err = s.stateCommand(ctx, st)
		case "run":
			err = s.runCommand(ctx, st)
		case "env":
			err = s.setEnv(ctx, st)
		case "multienv":
			err = s.multienv(ctx, st)
		case "version":
		default:
			err = atoll.Errorf(atoll.EINVALID, "%s steps are not supported by Atoll.", st.Name)
		}
		if err != nil {
			return err
		}
		if st.Name != "plan" && st.Name != "show" && st.Name != "version" {
			s.planText = ""
		}
	}
	return nil
}

func (s *steps) plan(ctx context.Context, st atoll.Step) error {
	args := planArgs(s.dir, s.j, st.ExtraArgs)
	if err := checkVarFiles(s.dir, s.j.Dir, args); err != nil {
		return err
	}
	s.sink.Write(atoll.StreamAtoll, commandLine(terraform.PlanArgv(planFileName(s.j), args)))
	out, _, err := s.terraform().Plan(ctx, s.dir, s.planFile, args, s.x.emit)
	s.outputs = append(s.outputs, out)
	s.planText = out
	return err
}

// planArgs are a plan's arguments after Atoll's own: the step's extra_args,
// the comment's, and, as in Atlantis, -var-file env/WORKSPACE.tfvars when
// the project dir has that file.
func planArgs(dir string, j *atoll.Job, extra []string) []string {
	args := append(append([]string{}, extra...), j.Spec.ExtraArgs...)
	rel := filepath.Join("env", j.Workspace+".tfvars")
	if st, err := os.Stat(filepath.Join(dir, rel)); err == nil && st.Mode().IsRegular() {
		args = append(args, "-var-file", filepath.ToSlash(rel))
	}
	return args
}

// show writes the plan's JSON to SHOWFILE for later steps (policy tools).
func (s *steps) show(ctx context.Context) error {
	show, err := s.terraform().ShowJSON(ctx, s.dir, s.planFile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(s.showFile(), show, 0o600); err != nil {
		return fmt.Errorf("write show file: %w", err)
	}
	return nil
}

func (s *steps) apply(ctx context.Context, st atoll.Step) error {
	args := append(append([]string{}, st.ExtraArgs...), s.j.Spec.ExtraArgs...)
	if err := checkVarFiles(s.dir, s.j.Dir, args); err != nil {
		return err
	}
	s.sink.Write(atoll.StreamAtoll, commandLine(terraform.ApplyArgv(planFileName(s.j), args)))
	out, err := s.terraform().Apply(ctx, s.dir, s.planFile, args, s.x.emit)
	s.outputs = append(s.outputs, out)
	return err
}

func (s *steps) showFile() string {
	return strings.TrimSuffix(s.planFile, ".tfplan") + ".json"
}

// argv is the command line of a step's command: the configured shell (sh
// by default) and its arguments (-c by default), then the command. Only
// atlantis.yaml's text reaches the shell; comment arguments are passed in
// COMMENT_ARGS, never on a command line.
func argv(st atoll.Step) []string {
	shell, args := st.Shell, st.ShellArgs
	if shell == "" {
		shell = "sh"
	}
	if len(args) == 0 {
		args = []string{"-c"}
	}
	return append(append([]string{shell}, args...), st.Command)
}

// runCommand runs a run step, its output in the log and the comment as its
// output option says. A failing command fails the project, its output (even
// a hidden one, as in Atlantis) in the comment.
func (s *steps) runCommand(ctx context.Context, st atoll.Step) error {
	env, err := s.commandEnv(ctx)
	if err != nil {
		return err
	}
	filter, err := outputFilter(st)
	if err != nil {
		return err
	}
	s.sink.Write(atoll.StreamAtoll, "$ "+st.Command)
	var emit func(terraform.Line)
	if st.Output != "hide" {
		emit = func(l terraform.Line) {
			if text, ok := filter(l.Text); ok {
				s.sink.Write(l.Stream, text)
			}
		}
	}
	out, err := s.terraform().Command(ctx, s.dir, argv(st), env, emit)
	var kept []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if text, ok := filter(l); ok {
			kept = append(kept, text)
		}
	}
	out = strings.Join(kept, "\n")
	var ce *terraform.CommandError
	if errors.As(err, &ce) {
		s.outputs = append(s.outputs, out)
		return atoll.Errorf(atoll.EINVALID, "The run step `%s` failed: %v.", st.Command, ce)
	} else if err != nil {
		return err
	}
	if st.Output != "hide" && out != "" {
		s.outputs = append(s.outputs, out)
	}
	return nil
}

// outputFilter drops "Refreshing state..." lines (strip_refreshing) and
// redacts filter_regex matches as Atlantis does (the first and second
// groups are kept around "<redacted>").
func outputFilter(st atoll.Step) (func(string) (string, bool), error) {
	var res []*regexp.Regexp
	for _, f := range st.FilterRegex {
		re, err := regexp.Compile(f)
		if err != nil {
			return nil, atoll.Errorf(atoll.EINVALID, "filter_regex %q: %v", f, err)
		}
		res = append(res, re)
	}
	return func(l string) (string, bool) {
		if st.Output == "strip_refreshing" && strings.Contains(l, "Refreshing state...") {
			return "", false
		}
		for _, re := range res {
			l = re.ReplaceAllString(l, "${1}<redacted>$2")
		}
		return l, true
	}, nil
}

// setEnv runs an env step: a value, or a command's standard output without
// its last newline. The value is never logged.
func (s *steps) setEnv(ctx context.Context, st atoll.Step) error {
	if st.Value != nil {
		s.env = append(s.env, st.EnvName+"="+*st.Value)
		s.sink.Write(atoll.StreamAtoll, "env: "+st.EnvName+" set")
		return nil
	}
	out, err := s.commandStdout(ctx, st)
	if err != nil {
		return err
	}
	s.env = append(s.env, st.EnvName+"="+strings.TrimSuffix(out, "\n"))
	s.sink.Write(atoll.StreamAtoll, "env: "+st.EnvName+" set from `"+st.Command+"`")
	return nil
}

// multienv runs a multienv step: its command prints KEY=VALUE pairs
// separated by commas (values may be quoted), each set for later steps.
// The names, never the values, go to the log and (unless hidden) comment.
func (s *steps) multienv(ctx context.Context, st atoll.Step) error {
	out, err := s.commandStdout(ctx, st)
	if err != nil {
		return err
	}
	pairs, err := parseMultienv(out)
	if err != nil {
		return atoll.Errorf(atoll.EINVALID, "The multienv step `%s` printed an invalid variable list: %v.", st.Command, err)
	}
	msg := "No dynamic environment variable added"
	if len(pairs) > 0 {
		msg = "Dynamic environment variables added:"
		for _, kv := range pairs {
			msg += "\n" + envKey(kv)
		}
	}
	s.env = append(s.env, pairs...)
	if st.Output != "hide" {
		for _, l := range strings.Split(msg, "\n") {
			s.sink.Write(atoll.StreamStdout, l)
		}
		s.outputs = append(s.outputs, msg)
	}
	return nil
}

// commandStdout runs an env or multienv command and returns its standard
// output, which holds values: none of it is logged.
func (s *steps) commandStdout(ctx context.Context, st atoll.Step) (string, error) {
	env, err := s.commandEnv(ctx)
	if err != nil {
		return "", err
	}
	out, err := s.terraform().CommandStdout(ctx, s.dir, argv(st), env, nil)
	var ce *terraform.CommandError
	if errors.As(err, &ce) {
		msg := fmt.Sprintf("The %s step `%s` failed: %v.", st.Name, st.Command, ce)
		if tail := strings.TrimSpace(ce.Stderr); tail != "" {
			msg += "\n\n" + tail
		}
		return "", atoll.Errorf(atoll.EINVALID, "%s", msg)
	}
	return out, err
}

// commandEnv is what a step's command gets beyond Terraform's environment:
// the variables Atlantis documents for custom workflows, then those of
// earlier env and multienv steps. PATH starts with the directory of the
// Terraform binary the job runs, so `terraform` in a command is that one
// (see terraformPath).
func (s *steps) commandEnv(ctx context.Context) ([]string, error) {
	v, err := s.x.terraformVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("terraform version: %w", err)
	}
	j := s.j
	env := []string{
		"ATLANTIS_TERRAFORM_VERSION=" + v.String(),
		"WORKSPACE=" + j.Workspace,
		"DIR=" + s.dir,
		"PLANFILE=" + s.planFile,
		"SHOWFILE=" + s.showFile(),
		"POLICYCHECKFILE=" + strings.TrimSuffix(s.planFile, ".tfplan") + "-policyout.json",
		"PROJECT_NAME=" + j.Project,
		"REPO_REL_DIR=" + j.Dir,
	}
	env = append(env, s.x.pullEnv...)
	if dirs := s.x.terraformPath(); len(dirs) > 0 {
		path := envValue(s.terraform().Environ(), "PATH")
		env = append(env, "PATH="+strings.Join(append(dirs, path), string(os.PathListSeparator)))
	}
	return append(env, s.env...), nil
}

// pullEnv is what Atlantis tells run steps and workflow hooks about the
// pull request, the commit and the command's user and arguments.
func pullEnv(w *work, headSHA, user string, extraArgs []string) []string {
	return []string{
		"BASE_REPO_NAME=" + w.repo.Name,
		"BASE_REPO_OWNER=" + w.repo.Owner,
		// Fork pull requests are refused unless allowed; the head
		// repository's name is not recorded, so the base one stands in.
		"HEAD_REPO_NAME=" + w.repo.Name,
		"HEAD_REPO_OWNER=" + w.repo.Owner,
		"HEAD_BRANCH_NAME=" + w.pull.HeadRef,
		"HEAD_COMMIT=" + headSHA,
		"BASE_BRANCH_NAME=" + w.pull.BaseRef,
		"PULL_NUM=" + strconv.Itoa(w.pull.Number),
		"PULL_URL=" + w.pull.URL,
		"PULL_AUTHOR=" + w.pull.Author,
		"USER_NAME=" + user,
		"COMMENT_ARGS=" + commentArgs(extraArgs),
	}
}

// commentArgs is COMMENT_ARGS: the comment's arguments after "--", each
// character backslash-escaped as Atlantis does, joined by commas.
func commentArgs(args []string) string {
	escaped := make([]string, len(args))
	for i, a := range args {
		var b strings.Builder
		for _, c := range a {
			b.WriteByte('\\')
			b.WriteRune(c)
		}
		escaped[i] = b.String()
	}
	return strings.Join(escaped, ",")
}

func envKey(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	return k
}

// parseMultienv reads a multienv command's output: KEY=VALUE pairs
// separated by commas, with surrounding whitespace ignored. A value may be
// double-quoted (with \" and \\ escapes) or single-quoted to hold commas.
func parseMultienv(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	var out []string
	for s != "" {
		key, rest, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("%q has no =", s)
		}
		key = strings.TrimSpace(key)
		if !envName.MatchString(key) {
			return nil, fmt.Errorf("%q is not a variable name", key)
		}
		var value string
		switch {
		case strings.HasPrefix(rest, `"`):
			var b strings.Builder
			i, closed := 1, false
			for ; i < len(rest); i++ {
				c := rest[i]
				if c == '\\' && i+1 < len(rest) && (rest[i+1] == '"' || rest[i+1] == '\\') {
					b.WriteByte(rest[i+1])
					i++
					continue
				}
				if c == '"' {
					closed = true
					break
				}
				b.WriteByte(c)
			}
			if !closed {
				return nil, fmt.Errorf("the value of %s is misquoted", key)
			}
			value, rest = b.String(), rest[i+1:]
		case strings.HasPrefix(rest, `'`):
			end := strings.IndexByte(rest[1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("the value of %s is misquoted", key)
			}
			value, rest = rest[1:1+end], rest[2+end:]
		default:
			value, rest, _ = strings.Cut(rest, ",")
			rest = "," + rest
		}
		rest = strings.TrimSpace(rest)
		if rest != "" && rest != "," && !strings.HasPrefix(rest, ",") {
			return nil, fmt.Errorf("unexpected %q after the value of %s", rest, key)
		}
		out = append(out, key+"="+value)
		s = strings.TrimSpace(strings.TrimPrefix(rest, ","))
	}
	return out, nil
}

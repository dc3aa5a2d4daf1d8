package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestModuleSources(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		want    []string
		wantErr bool
	}{
		{"block", "module \"a\" {\n  source = \"./a\"\n}\n", []string{"./a"}, false},
		{"bare label, one line, trailing comment", "module a { source = \"../b\" } # c\n", []string{"../b"}, false},
		{"remote with version", "module \"vpc\" {\n  source  = \"terraform-aws-modules/vpc/aws\"\n  version = \"5.0.0\"\n  providers = { aws = aws.east }\n}\n", []string{"terraform-aws-modules/vpc/aws"}, false},
		{"several", "module \"a\" {\n source = \"./a\"\n}\nmodule \"b\" {\n source = \"./b\"\n}\n", []string{"./a", "./b"}, false},
		{"comments are not code", "# module \"x\" {\n// source = \"./no\"\n/* module \"y\" {\n source = \"./no\"\n} */\nmodule \"a\" {\n  source = \"./a\" // ok\n}\n", []string{"./a"}, false},
		{"braces in strings and heredocs", "locals {\n  x = \"}\"\n  y = <<-EOT\n    module \"z\" {\n      source = \"./no\"\n    }\n  EOT\n  z = \"${jsonencode({a = \"}\"})}\"\n}\nmodule \"a\" {\n  source = \"./a\"\n}\n", []string{"./a"}, false},
		{"source in a nested object is not the source", "module \"a\" {\n  source = \"./a\"\n  cfg = {\n    source = \"./no\"\n  }\n}\n", []string{"./a"}, false},
		{"module as an attribute", "locals {\n  module = \"./no\"\n}\n", nil, false},
		{"no modules", "resource \"terraform_data\" \"a\" {}\n", nil, false},
		{"interpolated source", "module \"a\" {\n  source = \"./${var.x}\"\n}\n", nil, true},
		{"expression source", "module \"a\" {\n  source = var.x\n}\n", nil, true},
		{"escaped source", "module \"a\" {\n  source = \"./a\\\\b\"\n}\n", nil, true},
		{"no source", "module \"a\" {\n  version = \"1\"\n}\n", nil, true},
		{"unbalanced", "module \"a\" {\n  source = \"./a\"\n", nil, true},
		{"unterminated string", "module \"a\" {\n  source = \"./a\n}\n", nil, true},
		{"unterminated heredoc", "locals {\n  y = <<EOT\n  x\n}\n", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := moduleSources([]byte(c.src))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if !c.wantErr && !reflect.DeepEqual(got, c.want) {
				t.Fatalf("sources = %q, want %q", got, c.want)
			}
		})
	}
}

func TestModuleSourcesJSON(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		want    []string
		wantErr bool
	}{
		{"object", `{"module": {"a": {"source": "./a"}}}`, []string{"./a"}, false},
		{"list of blocks", `{"module": {"a": [{"source": "./a"}]}}`, []string{"./a"}, false},
		{"list of objects", `{"module": [{"a": {"source": "./a"}}]}`, []string{"./a"}, false},
		{"none", `{"resource": {}}`, nil, false},
		{"template", `{"module": {"a": {"source": "./${var.x}"}}}`, nil, true},
		{"not a string", `{"module": {"a": {"source": 1}}}`, nil, true},
		{"not JSON", `{`, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := moduleSourcesJSON([]byte(c.src))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if !c.wantErr && !reflect.DeepEqual(got, c.want) {
				t.Fatalf("sources = %q, want %q", got, c.want)
			}
		})
	}
}

// Every input of terraform init changes the fingerprint; what init does not
// read does not; what cannot be read for sure is an error.
func TestInitFingerprint(t *testing.T) {
	write := func(t *testing.T, path, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setup := func(t *testing.T) initInputs {
		root := t.TempDir()
		dir := filepath.Join(root, "app")
		write(t, filepath.Join(dir, "main.tf"), "terraform {\n  backend \"local\" {}\n}\nmodule \"a\" {\n  source = \"./modules/a\"\n}\n")
		write(t, filepath.Join(dir, "modules/a/main.tf"), "module \"b\" {\n  source = \"../../../shared/b\"\n}\n")
		write(t, filepath.Join(root, "shared/b/main.tf"), "resource \"terraform_data\" \"b\" {}\n")
		write(t, filepath.Join(dir, "stg.hcl"), "path = \"stg.tfstate\"\n")
		write(t, filepath.Join(root, "bin/terraform"), "binary")
		write(t, filepath.Join(root, "terraformrc"), "")
		return initInputs{Dir: dir, DataDir: filepath.Join(dir, ".terraform"), Args: []string{"-backend-config", "stg.hcl"},
			Env: []string{"PATH=/bin", "TF_CLI_CONFIG_FILE=" + filepath.Join(root, "terraformrc")}, Bin: filepath.Join(root, "bin/terraform"), Version: "1.5.7"}
	}
	changes := []struct {
		name string
		edit func(t *testing.T, in *initInputs)
	}{
		{"init args", func(t *testing.T, in *initInputs) { in.Args = append(in.Args, "-backend-config=path=prd.tfstate") }},
		{"env", func(t *testing.T, in *initInputs) { in.Env = append(in.Env, "TF_PLUGIN_CACHE_DIR=/x") }},
		{"version", func(t *testing.T, in *initInputs) { in.Version = "1.5.8" }},
		{"binary path", func(t *testing.T, in *initInputs) {
			write(t, in.Bin+"2", "binary")
			in.Bin += "2"
		}},
		{"binary replaced", func(t *testing.T, in *initInputs) {
			os.Chtimes(in.Bin, time.Now(), time.Now().Add(time.Hour))
		}},
		{"CLI config file", func(t *testing.T, in *initInputs) {
			write(t, envValue(in.Env, "TF_CLI_CONFIG_FILE"), "plugin_cache_dir = \"/x\"\n")
		}},
		{"backend config file", func(t *testing.T, in *initInputs) {
			write(t, filepath.Join(in.Dir, "stg.hcl"), "path = \"prd.tfstate\"\n")
		}},
		{"tfbackend file", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.Dir, "prd.tfbackend"), "path = \"x\"\n") }},
		{"root .tf", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.Dir, "providers.tf"), "\n") }},
		{"root .tf.json", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.Dir, "x.tf.json"), "{}") }},
		{"lock file", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.Dir, ".terraform.lock.hcl"), "\n") }},
		{"local module", func(t *testing.T, in *initInputs) {
			write(t, filepath.Join(in.Dir, "modules/a/extra.tf"), "module \"c\" {\n  source = \"hashicorp/c/aws\"\n}\n")
		}},
		{"module of a local module", func(t *testing.T, in *initInputs) {
			write(t, filepath.Join(in.Dir, "../shared/b/main.tf"), "resource \"terraform_data\" \"b\" {}\nmodule \"c\" {\n  source = \"./c\"\n}\n")
			write(t, filepath.Join(in.Dir, "../shared/b/c/main.tf"), "")
		}},
		{"installed modules", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.DataDir, "modules/modules.json"), "{}") }},
		{"initialised backend", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.DataDir, "terraform.tfstate"), "{}") }},
		{"installed providers", func(t *testing.T, in *initInputs) {
			write(t, filepath.Join(in.DataDir, "providers/registry.terraform.io/hashicorp/null/3.2.1/linux_amd64/p"), "")
		}},
		{"other data dir", func(t *testing.T, in *initInputs) {
			write(t, filepath.Join(in.DataDir, "terraform.tfstate"), "{}")
			in.DataDir = filepath.Join(in.Dir, ".terraform-other")
		}},
	}
	for _, c := range changes {
		t.Run("changes with "+c.name, func(t *testing.T) {
			in := setup(t)
			before, err := initFingerprint(in)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(t, &in)
			after, err := initFingerprint(in)
			if err != nil {
				t.Fatal(err)
			}
			if before == after {
				t.Fatal("fingerprint unchanged")
			}
		})
	}
	same := []struct {
		name string
		edit func(t *testing.T, in *initInputs)
	}{
		{"nothing", func(t *testing.T, in *initInputs) {}},
		{"env order", func(t *testing.T, in *initInputs) { in.Env[0], in.Env[1] = in.Env[1], in.Env[0] }},
		{"a README", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.Dir, "README.md"), "x") }},
		{"an unreferenced module", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.Dir, "modules/z/main.tf"), "x") }},
		{"the selected workspace and the marker", func(t *testing.T, in *initInputs) {
			write(t, filepath.Join(in.DataDir, "environment"), "blue")
			write(t, filepath.Join(in.DataDir, initMarker), "x")
		}},
	}
	for _, c := range same {
		t.Run("same with "+c.name, func(t *testing.T) {
			in := setup(t)
			before, err := initFingerprint(in)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(t, &in)
			if after, err := initFingerprint(in); err != nil || after != before {
				t.Fatalf("fingerprint changed (%v)", err)
			}
		})
	}
	errs := []struct {
		name string
		edit func(t *testing.T, in *initInputs)
	}{
		{"a module source from a variable", func(t *testing.T, in *initInputs) {
			write(t, filepath.Join(in.Dir, "modules/a/more.tf"), "module \"c\" {\n  source = var.where\n}\n")
		}},
		{"a missing local module", func(t *testing.T, in *initInputs) {
			write(t, filepath.Join(in.Dir, "modules/a/more.tf"), "module \"c\" {\n  source = \"./missing\"\n}\n")
		}},
		{"a missing backend config file", func(t *testing.T, in *initInputs) { in.Args = []string{"-backend-config=missing.hcl"} }},
		{"a missing binary", func(t *testing.T, in *initInputs) { in.Bin = filepath.Join(in.Dir, "no-terraform") }},
		{"an unreadable .tf.json", func(t *testing.T, in *initInputs) { write(t, filepath.Join(in.Dir, "x.tf.json"), "{") }},
	}
	for _, c := range errs {
		t.Run("error with "+c.name, func(t *testing.T) {
			in := setup(t)
			c.edit(t, &in)
			if fp, err := initFingerprint(in); err == nil {
				t.Fatalf("fingerprint %s, want an error", fp)
			}
		})
	}
}

func TestBackendConfigFiles(t *testing.T) {
	got := backendConfigFiles([]string{"-backend-config=a.hcl", "-backend-config=path=x", "--backend-config", "b.tfbackend", "-upgrade", "-backend-config"})
	if want := []string{"a.hcl", "b.tfbackend"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("files = %q, want %q", got, want)
	}
}

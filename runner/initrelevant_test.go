package runner

import (
	"bytes"
	"testing"
)

// A push that only edits what plan reads keeps init's inputs; anything init
// acts on, or cannot be read, changes them.
func TestInitRelevant(t *testing.T) {
	const base = `terraform {
  backend "local" {}
}

resource "terraform_data" "a" {
  input = "x"
}

variable "v" {}
locals { l = 1 }
output "o" { value = 1 }
module "m" {
  source = "./m"
  count  = 1
}
`
	cases := []struct {
		name, src string
		same      bool
	}{
		{"resource argument edited", `terraform {
  backend "local" {}
}

resource "terraform_data" "a" {
  input = "y"
  count = 3
}

variable "v" { default = 2 }
locals { l = 2 }
output "o" { value = 2 }
module "m" {
  source = "./m"
  count  = 2
}
`, true},
		{"another resource of a type in use", base + "resource \"terraform_data\" \"b\" {}\n", true},
		{"moved and removed blocks", base + "moved {\n  from = terraform_data.a\n  to = terraform_data.c\n}\n", true},
		{"comments and blank lines", "# note\n" + base + "\n\n", true},
		{"a resource of a new type", base + "resource \"aws_s3_bucket\" \"b\" {}\n", false},
		{"a data source of a new type", base + "data \"http\" \"x\" {}\n", false},
		{"a provider argument", base + "resource \"terraform_data\" \"c\" {\n  provider = other\n}\n", false},
		{"a provider block", base + "provider \"aws\" {}\n", false},
		{"the backend", `terraform {
  backend "s3" {}
}
` + base[len("terraform {\n  backend \"local\" {}\n}\n"):], false},
		{"required_providers", base + "terraform {\n  required_providers {\n    aws = { source = \"hashicorp/aws\" }\n  }\n}\n", false},
		{"a module source", base + "module \"n\" {\n  source = \"./n\"\n}\n", false},
		{"a module version", base[:len(base)-len("}\n")] + "  version = \"1.0.0\"\n}\n", false},
		{"an import block's provider", base + "import {\n  to = terraform_data.a\n  id = \"x\"\n  provider = p.alias\n}\n", false},
		{"a data source in a check", base + "check \"c\" {\n  data \"http\" \"h\" {}\n}\n", false},
		{"a block init might read", base + "cloud {}\n", false},
		{"a provider function", base + "output \"f\" { value = provider::x::y(1) }\n", false},
		{"a syntax error", base + "resource {\n", false},
	}
	want := initRelevant("main.tf", []byte(base))
	for _, c := range cases {
		got := initRelevant("main.tf", []byte(c.src))
		if same := bytes.Equal(got, want); same != c.same {
			t.Errorf("%s: init inputs unchanged = %v, want %v", c.name, same, c.same)
		}
	}
}

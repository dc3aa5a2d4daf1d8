package runner_test

import (
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// A project's resolved execution_pool is stored with its jobs (JobSpec.Pool):
// the project's where allowed_overrides lets it set one, else the server
// config's, "" for local; an apply keeps its plan job's, and a state rm
// job, resolved from the project as a plan is, gets it too. (Nothing
// routes by pool yet: the jobs run here.)
func TestJobSpecCarriesExecutionPool(t *testing.T) {
	yaml := "version: 3\nprojects:\n- {name: a, dir: a, execution_pool: gpu-1}\n- {name: b, dir: b}\n- {name: c, dir: c, execution_pool: local}\n"
	e := newOrderEnv(t, yaml, []string{"a", "b", "c"}, nil, 1)
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n- id: local/acme/infra\n  execution_pool: eu-runners\n  allowed_overrides: [execution_pool]\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.r.ServerConfig = sc
	e.start()
	want := map[string]string{"a": "gpu-1", "b": "eu-runners", "c": ""}
	for _, body := range []string{"atlantis plan", "atlantis apply"} {
		jobs, _ := e.comment(1, body)
		for name, pool := range want {
			j := jobs[name]
			if j == nil || j.State != atoll.JobSucceeded {
				t.Fatalf("%s: %s job %+v; want succeeded", body, name, j)
			}
			if j.Spec.Pool != pool {
				t.Errorf("%s: %s job (%s) Spec.Pool = %q; want %q", body, name, j.Kind, j.Spec.Pool, pool)
			}
		}
	}
	for name, pool := range want {
		jobs, _ := e.comment(1, "atlantis state rm -p "+name+" terraform_data.x")
		if j := jobs[name]; j == nil || j.Kind != atoll.JobStateRm || j.Spec.Pool != pool {
			t.Errorf("state rm of %s: job %+v; want a state_rm job in pool %q", name, j, pool)
		}
	}
}

package runner_test

import (
	"context"
	"sync"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner/executor"
)

// pools stands for the worker pools (package dispatch): it records which
// pool ran which job and answers as a worker that planned no changes, or
// applied.
type pools struct {
	mu  sync.Mutex
	ran map[string]string // project -> pool
}

func (p *pools) Executor(pool string) executor.Executor { return poolRun{p, pool} }

type poolRun struct {
	p    *pools
	pool string
}

func (r poolRun) Run(ctx context.Context, spec executor.Spec, events executor.Events) (executor.Result, error) {
	r.p.mu.Lock()
	r.p.ran[spec.Job.Project+" "+spec.Job.Kind] = r.pool
	r.p.mu.Unlock()
	if spec.Job.Kind == atoll.JobApply {
		if err := events.Applying(ctx); err != nil {
			return executor.Result{}, err
		}
	}
	return executor.Result{Output: "ran in pool " + r.pool, Summary: &atoll.Summary{}, Plan: []byte("plan"), ShowJSON: []byte(`{"format_version":"1.2"}`)}, nil
}

// A project's resolved execution_pool is stored with its jobs (JobSpec.Pool):
// the project's where allowed_overrides lets it set one, else the server
// config's, "" for local; an apply keeps its plan job's, and a state rm
// job, resolved from the project as a plan is, gets it too. Jobs of a pool
// run on the pool's executor (Runner.Pools), local ones here.
func TestJobSpecCarriesExecutionPool(t *testing.T) {
	yaml := "version: 3\nprojects:\n- {name: a, dir: a, execution_pool: gpu-1}\n- {name: b, dir: b}\n- {name: c, dir: c, execution_pool: local}\n"
	e := newOrderEnv(t, yaml, []string{"a", "b", "c"}, nil, 1)
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n- id: local/acme/infra\n  execution_pool: eu-runners\n  allowed_overrides: [execution_pool]\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.r.ServerConfig = sc
	ran := &pools{ran: map[string]string{}}
	e.r.Pools = ran
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
	for _, k := range []string{"a plan", "a apply", "b plan", "b apply"} {
		if got, wantPool := ran.ran[k], want[k[:1]]; got != wantPool {
			t.Errorf("%s ran in pool %q; want %q", k, got, wantPool)
		}
	}
	if pool, ok := ran.ran["c plan"]; ok {
		t.Errorf("the local project's plan ran in pool %q", pool)
	}
	for name, pool := range want {
		jobs, _ := e.comment(1, "atlantis state rm -p "+name+" terraform_data.x")
		if j := jobs[name]; j == nil || j.Kind != atoll.JobStateRm || j.Spec.Pool != pool {
			t.Errorf("state rm of %s: job %+v; want a state_rm job in pool %q", name, j, pool)
		}
	}
}

package repocfg

import (
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/atollhq/atoll"
)

// ExecutionPool is one entry of the server config's execution_pools: how a
// pool's jobs are run when it is not by the pool's own `atoll worker`
// processes.
type ExecutionPool struct {
	// Line is the entry's line in the file, for messages.
	Line int
	// Kubernetes is the pod template of a pool whose every job runs as a
	// Kubernetes Job (package kube decodes and checks it: its keys are
	// Kubernetes' own spelling), as JSON; nil when the pool has none.
	Kubernetes json.RawMessage
	// KubernetesLine is the line of its kubernetes key.
	KubernetesLine int
}

// executionPools decodes execution_pools: pool name → {kubernetes: {...}}.
func (d *decoder) executionPools(n *yaml.Node, path string) (map[string]ExecutionPool, error) {
	fs, err := d.fields(n, path)
	if err != nil {
		return nil, err
	}
	out := map[string]ExecutionPool{}
	for _, f := range fs {
		fp := join(path, f.name)
		if f.name == atoll.PoolLocal || !atoll.ValidPool(f.name) {
			return nil, d.errorf(f.key, fp, "%q is not a pool name for this list: 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit (and not %s, the active node's own)", f.name, atoll.PoolLocal)
		}
		p := ExecutionPool{Line: f.key.Line}
		pfs, err := d.fields(f.val, fp)
		if err != nil {
			return nil, err
		}
		for _, pf := range pfs {
			switch pf.name {
			case "kubernetes":
				v := resolve(pf.val)
				if v.Kind != yaml.MappingNode {
					return nil, d.typeError(v, join(fp, pf.name), "a mapping (a pod template)")
				}
				var tree any
				if err := v.Decode(&tree); err != nil {
					return nil, d.errorf(v, join(fp, pf.name), "%v", err)
				}
				raw, err := json.Marshal(tree)
				if err != nil {
					return nil, d.errorf(v, join(fp, pf.name), "%v", err)
				}
				p.Kubernetes, p.KubernetesLine = raw, pf.key.Line
			default:
				return nil, d.unknownKey(pf, fp)
			}
		}
		if p.Kubernetes == nil {
			return nil, d.errorf(f.key, fp, "says nothing of how its jobs run: give it a kubernetes pod template (a pool run by `atoll worker` processes needs no entry here)")
		}
		out[f.name] = p
	}
	return out, nil
}

// PoolLocation is "<file> line N: execution_pools.NAME.kubernetes", for
// the messages of whoever checks the template further.
func PoolLocation(file, name string, p ExecutionPool) string {
	return fmt.Sprintf("%s line %d: execution_pools.%s.kubernetes", file, p.KubernetesLine, name)
}

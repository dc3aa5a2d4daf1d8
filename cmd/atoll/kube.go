package main

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/atollhq/atoll/dispatch"
	"github.com/atollhq/atoll/kube"
	"github.com/atollhq/atoll/repocfg"
)

// inClusterNamespace is where a pod's service account says it runs.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// kubeStarters are the dispatcher's starters of the pools the server-side
// repo config runs as Kubernetes Jobs (execution_pools); none without
// such a pool. A bad template, or no way to reach the cluster, stops the
// server at start.
func (c *Config) kubeStarters(sc *repocfg.ServerConfig, publicURL string) (map[string]dispatch.Starter, error) {
	if sc == nil || len(sc.ExecutionPools) == 0 {
		return nil, nil
	}
	file := c.RepoConfig
	if file == "" {
		file = "--repo-config-json"
	}
	templates := map[string]kube.PodTemplate{}
	for name, p := range sc.ExecutionPools {
		t, err := kube.ParsePodTemplate(repocfg.PoolLocation(file, name, p), p.Kubernetes, c.KubeWorkerImage)
		if err != nil {
			return nil, err
		}
		templates[name] = t
	}
	urls, err := kubeServerURLs(c.KubeServerURL, publicURL)
	if err != nil {
		return nil, err
	}
	client, ns, err := c.kubeClient()
	if err != nil {
		return nil, err
	}
	launcher := &kube.Launcher{Client: client, Namespace: ns, Image: c.KubeWorkerImage, ScheduleTimeout: c.KubeScheduleTimeout}
	out := map[string]dispatch.Starter{}
	for name, t := range templates {
		out[name] = &kube.Starter{Launcher: launcher, Pool: name, Template: t, ServerURLs: urls}
	}
	return out, nil
}

// kubeServerURLs are the URLs pods reach the server at: --kube-server-url,
// else the public URL.
func kubeServerURLs(flag, publicURL string) ([]string, error) {
	list := publicURL
	if flag != "" {
		list = flag
	}
	var urls []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--kube-server-url: %q is not an http(s) URL", s)
		}
		urls = append(urls, strings.TrimSuffix(s, "/"))
	}
	return urls, nil
}

// kubeClient is the Kubernetes client of the Jobs and their namespace:
// from --kubeconfig/--kube-context when given, else the pod's own service
// account.
func (c *Config) kubeClient() (kubernetes.Interface, string, error) {
	var cfg *rest.Config
	ns := ""
	if c.Kubeconfig != "" || c.KubeContext != "" {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.ExplicitPath = c.Kubeconfig
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.KubeContext})
		var err error
		if cfg, err = cc.ClientConfig(); err != nil {
			return nil, "", fmt.Errorf("--kubeconfig: %w", err)
		}
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, "", fmt.Errorf("--kubeconfig: %w", err)
		}
	} else {
		var err error
		if cfg, err = rest.InClusterConfig(); err != nil {
			return nil, "", fmt.Errorf("the repo config runs pools on Kubernetes (execution_pools), and this server is not in a cluster (%v): give --kubeconfig", err)
		}
		if b, err := os.ReadFile(inClusterNamespace); err == nil {
			ns = strings.TrimSpace(string(b))
		}
	}
	if c.KubeNamespace != "" {
		ns = c.KubeNamespace
	}
	if ns == "" {
		return nil, "", fmt.Errorf("--kube-namespace: no namespace given, and none found in %s", inClusterNamespace)
	}
	cfg.UserAgent = "atoll/" + Version
	// client-go's default (5 requests a second, bursts of 10) would queue
	// a burst of plans: each Job costs about eight calls (its Secret, the
	// Job, the owner reference, the pod list, watch and events). The API
	// server's priority and fairness still protects it.
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("kubernetes client: %w", err)
	}
	return client, ns, nil
}

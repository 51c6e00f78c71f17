package spec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummary(t *testing.T) {
	f := false
	for want, st := range map[string]*Step{
		"install chart cilium 1.18.4 from https://helm.cilium.io/ into kube-system":                  {Helm: &Helm{Chart: "cilium", Version: "1.18.4", Repo: "https://helm.cilium.io/", Release: "cilium", Namespace: "kube-system"}},
		"install chart app 2.0.0 from https://***@charts.example.com as release web into apps":       {Helm: &Helm{Chart: "app", Version: "2.0.0", Repo: "https://bot:pw@charts.example.com", Release: "web", Namespace: "apps"}},
		"install chart ./charts/demo-0.1.0.tgz as release demo into demo":                            {Helm: &Helm{Chart: "./charts/demo-0.1.0.tgz", Release: "demo", Namespace: "demo"}},
		"apply the CRDs of chart app 2.0.0 from https://charts.example.com (crds: only, no release)": {Helm: &Helm{Chart: "app", Version: "2.0.0", Repo: "https://charts.example.com", Release: "web", Namespace: "apps", CRDs: CRDsOnly}},
		"apply 3 manifest sources into argocd, wait for condition=Established":                       {Apply: &Apply{Namespace: "argocd", WaitFor: "condition=Established", Manifests: make([]Source, 3)}},
		"apply ./crds.yaml":                        {Apply: &Apply{Manifests: []Source{{File: "./crds.yaml"}}}},
		"apply kustomization ./overlays/prod":      {Apply: &Apply{Manifests: []Source{{Kustomize: "./overlays/prod"}}}},
		"delete daemonset/aws-node in kube-system": {Delete: &Delete{Resource: "daemonset/aws-node", Namespace: "kube-system"}},
		"delete pods selected by label app=x and field status.phase=Failed in all namespaces": {Delete: &Delete{Resource: "pods", Selector: "app=x", FieldSelector: "status.phase=Failed", AllNamespaces: true, IgnoreNotFound: &f}},
		"uninstall release nginx-ingress from ingress":                                        {Delete: &Delete{Release: "nginx-ingress", Namespace: "ingress"}},
		"delete the objects of an inline manifest":                                            {Delete: &Delete{Manifests: []Source{{Inline: "x"}}}},
		"strategic-patch daemonset/aws-node in kube-system":                                   {Patch: &Patch{Target: "daemonset/aws-node", Namespace: "kube-system"}},
		"wait for condition=Ready on pods in all namespaces":                                  {Wait: &Wait{For: "condition=Ready", On: "pods", AllNamespaces: true}},
		"restart daemonset/x in kube-system":                                                  {Rollout: &Rollout{Restart: "daemonset/x", Namespace: "kube-system"}},
		"wait for the rollout of deployment/x in apps":                                        {Rollout: &Rollout{Status: "deployment/x", Namespace: "apps"}},
		"run image busybox:1.37 in default: echo done":                                        {Job: &Job{Image: "busybox:1.37", Command: []string{"echo", "done"}, Namespace: "default"}},
		"no action": {},
	} {
		if got := Summary(st); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

func TestOrder(t *testing.T) {
	s := &Spec{Steps: []*Step{
		{Name: "d", Needs: []string{"b", "c"}},
		{Name: "a"},
		{Name: "b", Needs: []string{"a"}},
		{Name: "c", Needs: []string{"a"}},
		{Name: "e"},
		{Name: "x", Needs: []string{"y"}}, // a cycle is left out
		{Name: "y", Needs: []string{"x"}},
	}}
	want := [][]string{{"a", "e"}, {"b", "c"}, {"d"}}
	if diff := cmp.Diff(want, s.Order()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "x": {"y"}, "y": {"x"}}, s.Dependents()); diff != "" {
		t.Errorf("dependents (-want +got):\n%s", diff)
	}
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The cases #49 names beside the conformance, each judged by a live
// khook plan (the policy not installed) and by the API server (installed):
// Warn and Audit bindings, an UPDATE judged with its oldObject, a param
// found in the request's namespace (paramRef without namespace), a
// namespaceSelector on a label of the namespace, and the request's
// identity (request.userInfo).
type vapLiveCase struct {
	name, policy, binding, params string
	object                        string // the object planned (created unless live is set)
	live                          string // an object that exists first: the plan is an UPDATE
	nsLabels                      map[string]string
	want                          string // the server's verdict, as khook must say it
	audit                         bool   // khook shows an audit, not a deny
	// probe is an object the policy denies (or warns of, through
	// probeBinding, installed last): proof the server enforces the
	// binding under test, installed before it.
	probe, probeBinding string
}

const vapDeploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`

func vapLivePolicy(name, validations, extra string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: ` + name + `}
spec:
  failurePolicy: Fail
` + extra + `  matchConstraints:
    resourceRules:
      - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
` + validations
}

func vapLiveBinding(name, actions, extra string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: ` + name + `-binding}
spec:
  policyName: ` + name + `
  validationActions: [` + actions + `]
` + extra
}

func TestVAPLiveCases(t *testing.T) {
	few := "    - {expression: 'object.spec.replicas <= 2', message: too many replicas}\n"
	cases := []vapLiveCase{
		{name: "warn", policy: vapLivePolicy("trial-warn", few, ""), binding: vapLiveBinding("trial-warn", "Warn", ""),
			object: fmt.Sprintf(vapDeploy, 5), want: verdictWarn},
		{name: "audit", policy: strings.Replace(vapLivePolicy("trial-audit", "    - {expression: \"!has(object.data) || !('password' in object.data)\", message: no passwords}\n", ""),
			"{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}", "{apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets]}", 1),
			binding: vapLiveBinding("trial-audit", "Audit", ""), object: "apiVersion: v1\nkind: Secret\nmetadata: {name: trial-audit}\ndata: {password: c2VjcmV0}\n",
			want: verdictAdmit, audit: true,
			probe:        "apiVersion: v1\nkind: Secret\nmetadata: {name: trial-probe, labels: {probe: \"true\"}}\ndata: {password: c2VjcmV0}\n",
			probeBinding: strings.Replace(vapLiveBinding("trial-audit", "Warn", "  matchResources: {objectSelector: {matchLabels: {probe: \"true\"}}}\n"), "trial-audit-binding", "trial-audit-probe", 1)},
		{name: "update with oldObject", policy: vapLivePolicy("trial-noscaledown",
			"    - {expression: 'oldObject == null || object.spec.replicas >= oldObject.spec.replicas', message: no scaling down}\n", ""),
			binding: vapLiveBinding("trial-noscaledown", "Deny", ""), live: fmt.Sprintf(vapDeploy, 3), object: fmt.Sprintf(vapDeploy, 1), want: verdictDeny},
		{name: "update allowed", policy: vapLivePolicy("trial-noscaledown2",
			"    - {expression: 'oldObject == null || object.spec.replicas >= oldObject.spec.replicas', message: no scaling down}\n", ""),
			binding: vapLiveBinding("trial-noscaledown2", "Deny", ""), live: fmt.Sprintf(vapDeploy, 1), object: fmt.Sprintf(vapDeploy, 2), want: verdictAdmit,
			probe: fmt.Sprintf(vapDeploy, 0)},
		{name: "param in the request's namespace", policy: vapLivePolicy("trial-nsparam",
			"    - {expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: \"'at most ' + params.data.max\"}\n",
			"  paramKind: {apiVersion: v1, kind: ConfigMap}\n"),
			binding: vapLiveBinding("trial-nsparam", "Deny", "  paramRef: {name: trial-limits, parameterNotFoundAction: Deny}\n"),
			params:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: trial-limits, namespace: NS}\ndata: {max: \"2\"}\n",
			object:  fmt.Sprintf(vapDeploy, 4), want: verdictDeny},
		{name: "namespaceSelector on a label", policy: vapLivePolicy("trial-nslabel", few, ""),
			binding:  vapLiveBinding("trial-nslabel", "Deny", "  matchResources: {namespaceSelector: {matchLabels: {tier: restricted}}}\n"),
			nsLabels: map[string]string{"tier": "restricted"}, object: fmt.Sprintf(vapDeploy, 4), want: verdictDeny},
		{name: "request.userInfo", policy: vapLivePolicy("trial-user",
			"    - {expression: 'false', messageExpression: \"'written by ' + request.userInfo.username + ' in ' + request.userInfo.groups.join(',')\"}\n", ""),
			binding: vapLiveBinding("trial-user", "Deny", ""), object: fmt.Sprintf(vapDeploy, 1), want: verdictDeny},
	}
	srv := newAPIServer(t)
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) { judgeLiveCase(t, srv, c) })
	}
}

// judgeLiveCase compares one case's live khook plan with the server.
func judgeLiveCase(t *testing.T, srv *apiServer, c vapLiveCase) {
	ns := namespace(t)
	if len(c.nsLabels) > 0 {
		labelNamespace(t, ns, c.nsLabels)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, "NS", ns)), 0o644))
	}
	write("policy.yaml", c.policy)
	write("binding.yaml", c.binding)
	if c.params != "" {
		write("params.yaml", c.params)
	}
	write("objects/object.yaml", c.object)
	obj := readObjects(t, filepath.Join(dir, "objects", "object.yaml"))[0]
	if c.live != "" {
		live := readObjects(t, writeSpec(t, c.live))[0]
		ri, err := srv.resource(live, ns)
		must(t, err)
		_, err = ri.Create(t.Context(), live, metav1.CreateOptions{})
		must(t, err)
	}
	p := vapPolicy{Policy: c.policyName(), dir: dir}
	kv, err := planVerdict(t, p, vapCase{Name: c.name, Object: "objects/object.yaml"}, ns, false)
	must(t, err)

	// Registered before the installs: cleanups run last first, so this
	// awaits the policy's deletion.
	var probe *unstructured.Unstructured
	if c.probe != "" {
		probe = readObjects(t, writeSpec(t, c.probe))[0]
	}
	t.Cleanup(func() {
		gone := obj
		if probe != nil {
			gone = probe
		}
		if err := srv.awaitGone(context.Background(), c, ns, gone); err != nil {
			t.Errorf("the API server still applies %s a minute after its deletion: %v", p.Policy, err)
		}
	})
	for _, f := range p.policyFiles()[2:] {
		srv.install(t, f)
	}
	srv.install(t, filepath.Join(dir, "policy.yaml"))
	srv.install(t, filepath.Join(dir, "binding.yaml"))
	if c.probeBinding != "" {
		// Bindings reach the server's cache in order: once this one
		// warns, the binding under test is there too.
		srv.install(t, writeSpec(t, c.probeBinding))
	}
	server, err := srv.awaitVerdict(t.Context(), c, ns, obj, probe)
	if err != nil {
		t.Fatalf("the API server did not come to enforce %s within a minute (its last verdict: %s): %v", p.Policy, server, err)
	}
	t.Logf("%s: the API server: %s; khook plan (live): %s (audit %q, notes %q)", c.name, server, kv.verdict, kv.audit, kv.notes)
	if server.Effect != c.want {
		t.Fatalf("the API server says %s, the case expects %s: the comparison would prove nothing", server, c.want)
	}
	if kv.verdict.Effect != server.Effect {
		t.Errorf("the API server says %s, khook plan (live) says %s (notes %q)", server, kv.verdict, kv.notes)
	}
	if c.audit && kv.audit == "" {
		t.Errorf("khook plan shows no audit for an Audit binding that fails")
	}
	if server.Effect == verdictDeny && !sameDenial(server.Message, kv.verdict.Message) {
		t.Errorf("khook's denial %q does not carry the API server's sentence %q", kv.verdict.Message, server.Message)
	}
}

// sameDenial: khook's message holds the server's sentence from
// "ValidatingAdmissionPolicy '" on (the server prefixes the object).
func sameDenial(server, khook string) bool {
	i := strings.Index(server, "ValidatingAdmissionPolicy '")
	return i >= 0 && strings.Contains(khook, strings.TrimSpace(server[i:]))
}

// admitOrUpdate is the server's verdict on obj: a dry-run create, or a
// dry-run update of the live object when update is set.
func (s *apiServer) admitOrUpdate(ctx context.Context, obj *unstructured.Unstructured, ns, policy string, update bool) (verdict, error) {
	if !update {
		return s.admit(ctx, obj, ns, policy)
	}
	ri, err := s.resource(obj, ns)
	if err != nil {
		return verdict{}, err
	}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return verdict{}, err
	}
	o := obj.DeepCopy()
	o.SetResourceVersion(live.GetResourceVersion())
	s.warned.take()
	_, err = ri.Update(ctx, o, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	return s.verdictOf(err, policy), nil
}

// awaitVerdict is the server's verdict on obj once it enforces the
// policy (its admission cache is eventually consistent): proof says it
// does (a probe it denies, an audit event it wrote).
func (s *apiServer) awaitVerdict(ctx context.Context, c vapLiveCase, ns string, obj, probe *unstructured.Unstructured) (verdict, error) {
	var v verdict
	policy := c.policyName()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if probe != nil {
			want := verdictDeny
			if c.probeBinding != "" {
				want = verdictWarn
			}
			pv, err := s.admitOrUpdate(ctx, probe, ns, policy, c.live != "")
			if err != nil || pv.Effect != want {
				return false, err
			}
		}
		if v, err = s.admitOrUpdate(ctx, obj, ns, policy, c.live != ""); err != nil {
			return false, err
		}
		return probe != nil || v.Effect != verdictAdmit, nil
	})
	return v, err
}

// awaitGone awaits the server no longer denying or warning by the
// policy (deleted): the next case's plan must not meet it.
func (s *apiServer) awaitGone(ctx context.Context, c vapLiveCase, ns string, obj *unstructured.Unstructured) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		v, err := s.admitOrUpdate(ctx, obj, ns, c.policyName(), c.live != "")
		return err == nil && v.Effect != verdictDeny && v.Effect != verdictWarn, err
	})
}

func (c vapLiveCase) policyName() string {
	rest := c.policy[strings.Index(c.policy, "metadata: {name: ")+len("metadata: {name: "):]
	return rest[:strings.Index(rest, "}")]
}

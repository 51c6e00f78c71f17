package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/ci/gha"
	"github.com/khook/khook/internal/ci/github/githubtest"
	"github.com/khook/khook/test/ci/citest"
)

// policySpec is a one-step spec whose Deployment runs image and carries
// the team label when team is set.
func policySpec(image, team string) string {
	labels := "{app: web}"
	if team != "" {
		labels = "{app: web, team: " + team + "}"
	}
	return `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: policy-demo
steps:
  - name: web
    apply:
      namespace: ${NS}
      manifests:
        - inline: |
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: web
              labels: ` + labels + `
            spec:
              replicas: 1
              selector: {matchLabels: {app: web}}
              template:
                metadata: {labels: {app: web}}
                spec:
                  containers:
                    - name: web
                      image: ` + image + `
`
}

// The rules the platform team keeps on the default branch, beside the
// pull request's head: a deny and a warn.
const policyRules = `policies:
  - name: no-latest-images
    deny: object.spec.template.spec.containers.exists(c, c.image.endsWith(":latest"))
    message: >-
      "image " + object.spec.template.spec.containers.map(c, c.image).join(", ") + " is not pinned"
    match:
      kinds: [Deployment]
  - name: single-replica
    warn: has(object.spec.replicas) && object.spec.replicas < 2
    message: "'one replica: the workload is down while its pod restarts'"
    match:
      kinds: [Deployment]
`

// The cluster's own admission policy, checked against the plan.
const policyAdmission = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: require-team-label
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: ["apps"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["deployments"]
  validations:
    - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
      messageExpression: "object.kind + ' ' + object.metadata.name + ' needs a team label'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: require-team-label
spec:
  policyName: require-team-label
  validationActions: [Deny]
`

// A pull request's plan under the policies input (#42): a deny fails the
// step and shows in the job summary, the sticky PR comment and an error
// annotation at the step's line; a warn is a warning. The compliant spec
// plans green with the warn still shown. Neither plan writes.
func TestPolicyGitHubActionPlan(t *testing.T) {
	ns := kube.Namespace(t)
	srv := githubtest.New()
	defer srv.Close()
	g := newRunner(t, srv.URL, "wouldfail.yaml", map[string]string{"command": "plan", "vars": "NS=" + ns,
		"policies": "policy/rules.yaml\npolicy/admission.yaml\n"})
	g.Write(t, "khook.yaml", policySpec("nginx:latest", ""))
	g.Write(t, "policy/rules.yaml", policyRules)
	g.Write(t, "policy/admission.yaml", policyAdmission)

	res := citest.Run(t, g.Workspace, g.Environ)
	outs, _ := gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 1 || outs["status"] != "failed" || outs["failure-reason"] != "step-failed" || outs["failed-steps"] != "web" || outs["plan-json-path"] == "" {
		t.Fatalf("a deny must fail the step: exit %d outputs %v\n%s\n%s", res.Code, outs, res.Stdout, res.Stderr)
	}
	obj := "Deployment " + ns + "/web"
	// The files are named relative to the workspace, as the spec is.
	files := "Policy files in force: policy/rules.yaml, policy/admission.yaml"
	policyMD := []string{"### Policy", files,
		"- ⛔ **deny** `no-latest-images` in step `web`: " + obj + ": image nginx:latest is not pinned",
		"- ⛔ **deny** `require-team-label (binding require-team-label)` in step `web`: " + obj + ": ValidatingAdmissionPolicy 'require-team-label' with binding 'require-team-label' denied request: Deployment web needs a team label",
		"- ⚠️ **warn** `single-replica` in step `web`: " + obj + ": one replica: the workload is down while its pod restarts",
		"| web | apply | ❌ **fail** | fail: policy no-latest-images denies " + obj + ": image nginx:latest is not pinned |",
	}
	summary := g.Read(t, "summary")
	for _, want := range policyMD {
		if !strings.Contains(summary, want) {
			t.Errorf("the job summary lacks %q:\n%s", want, summary)
		}
	}
	cs := srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("want one PR comment, got %d", len(cs))
	}
	for _, want := range append(policyMD, "**Status:** ❌ failed") {
		if !strings.Contains(cs[0].Body, want) {
			t.Errorf("the PR comment lacks %q:\n%s", want, cs[0].Body)
		}
	}
	// The step's name: is at line 6, column 5 of khook.yaml.
	annotations := annotationLine.FindAllString(res.Stdout, -1)
	denyAt := "::error file=khook.yaml,line=6,col=5,title=khook plan%3A step web would fail on apply::policy no-latest-images denies " + obj + ": image nginx:latest is not pinned"
	warnAt := "::warning file=khook.yaml,line=6,col=5,"
	warnText := obj + ": policy single-replica: one replica: the workload is down while its pod restarts"
	if !hasAnnotation(annotations, denyAt, "") {
		t.Errorf("no error annotation with the deny at the step's line:\n%s", strings.Join(annotations, "\n"))
	}
	if !hasAnnotation(annotations, warnAt, warnText) {
		t.Errorf("no warning annotation with the warn at the step's line:\n%s", strings.Join(annotations, "\n"))
	}
	assertNoDeployment(t, ns)

	// The compliant spec, pushed to the same pull request: the plan is
	// green, the warn is still a warning, the same comment is edited.
	g.ResetFiles()
	g.Event(t, 7, "89abcdef89abcdef89abcdef89abcdef89abcdef")
	g.Write(t, "khook.yaml", policySpec("nginx:1.27.3", "search"))
	res = citest.Run(t, g.Workspace, g.Environ)
	outs, _ = gha.ParseKeyValues(g.Read(t, "output"))
	if res.Code != 0 || outs["status"] != "ok" || outs["failed-steps"] != "" {
		t.Fatalf("the compliant plan: exit %d outputs %v\n%s\n%s", res.Code, outs, res.Stdout, res.Stderr)
	}
	annotations = annotationLine.FindAllString(res.Stdout, -1)
	if !hasAnnotation(annotations, warnAt, warnText) {
		t.Errorf("no warning annotation with the warn at the step's line:\n%s", strings.Join(annotations, "\n"))
	}
	for _, a := range annotations {
		if strings.HasPrefix(a, "::error") {
			t.Errorf("the compliant plan has an error annotation: %s", a)
		}
	}
	summary = g.Read(t, "summary")
	cs = srv.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("the second plan must edit the sticky comment; there are %d", len(cs))
	}
	for _, where := range []struct{ name, text string }{{"job summary", summary}, {"PR comment", cs[0].Body}} {
		for _, want := range []string{"### Policy", files, "- ⚠️ **warn** `single-replica` in step `web`: " + obj + ": one replica: the workload is down while its pod restarts"} {
			if !strings.Contains(where.text, want) {
				t.Errorf("the %s lacks %q:\n%s", where.name, want, where.text)
			}
		}
		for _, deny := range []string{"**deny**", "❌"} {
			if strings.Contains(where.text, deny) {
				t.Errorf("the %s of the compliant plan shows %q:\n%s", where.name, deny, where.text)
			}
		}
	}
	assertNoDeployment(t, ns)
}

// hasAnnotation reports whether an annotation line starts with prefix and
// contains text.
func hasAnnotation(lines []string, prefix, text string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, text) {
			return true
		}
	}
	return false
}

// assertNoDeployment fails when a plan wrote the Deployment.
func assertNoDeployment(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := kube.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a plan must write nothing: reading Deployment %s/web gave %v", ns, err)
	}
}

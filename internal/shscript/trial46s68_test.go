package shscript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/khook/khook/spec"
)

// What held-out trials of stop 68 showed, each cut down.
func TestTrial46s68Idioms(t *testing.T) {
	child := "#!/bin/bash\nhelm upgrade --install prom prometheus --repo https://e.com -n \"${NS:-default}\"\n"
	checkIdioms(t, []idiom{
		// a variable set and never exported is unset in a script run as a process of its own
		{name: "bash child.sh sees no unexported variable", script: "NS=monitoring\nbash ./child.sh\n",
			files: map[string]string{"child.sh": child}, want: []string{"namespace: ${NS}", `NS: {type: string, default: "default"}`}},
		{name: "an exported variable, and a NAME=v prefix, reach it", script: "export NS=monitoring\nbash ./child.sh\nNS=edge ./child.sh\n",
			files: map[string]string{"child.sh": child}, want: []string{"namespace: monitoring", "namespace: edge"}},
	})
}

func TestTrial46s68CatSed(t *testing.T) {
	checkIdioms(t, []idiom{
		// tluck/OpsMgr-in-Kubernetes-and-Docker's deploy_ldap.bash: cat f | sed … > out, then create -f out (46s68a's D1)
		{name: "cat FILE | sed > out", script: "T=LoadBalancer\ncat svc.yaml | sed -e \"s/SERVICETYPE/$T/g\" > my.yaml\nkubectl create -f my.yaml\n",
			files: map[string]string{"svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: SERVICETYPE\n  ports:\n  - port: 80\n"},
			want:  []string{"type: LoadBalancer", "# from install.sh:5"}},
	})
}

// kubectl's generators as kubectl 1.37 makes their objects (46s68d's N1).
func TestTrial46s68Generators(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "create deployment, then expose it", script: "kubectl create deployment web --image=nginx:1.25 --port=80 --replicas=2 -n shop\nkubectl expose deployment web --port=8080 --target-port=80 --type=NodePort -n shop\n",
			want: []string{"kind: Deployment", "replicas: 2", "name: nginx", "containerPort: 80", "kind: Service", "port: 8080", "targetPort: 80", "type: NodePort", "selector:\n                app: web"}},
		{name: "expose without --port takes the container's", script: "kubectl create deploy api --image=ghcr.io/x/api:1 --port 9000\nkubectl expose deploy/api\n",
			want: []string{"port: 9000\n                  protocol: TCP\n                  targetPort: 9000"}},
		{name: "run a pod that keeps running, with --expose", script: "kubectl run cache --image=redis:7 --port=6379 --expose\n",
			want: []string{"kind: Pod", "run: cache", "restartPolicy: Always", "dnsPolicy: ClusterFirst", "kind: Service", "port: 6379"}},
		{name: "expose of what the script did not make", script: "kubectl apply -f d.yaml\nkubectl expose deployment other --port 80\n",
			files:      map[string]string{"d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other}\n"},
			notCarried: []string{"kubectl expose reads the selector and ports of deployment other from the cluster"}},
		{name: "an image whose name kubectl suffixes at random", script: "kubectl create deployment w --image=my_app:1\n",
			notCarried: []string{"random suffix"}},
	})
}

// bishwesh-kumar/jmeter-gke's jmeter_cluster_create.sh: "$1", or a read
// answer, then kubectl: one line, one command, the read's path named (46s68b's D2).
func TestTrial46s68OneLineOneCommand(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\ntenant=\"$1\"\nif [ -z \"$tenant\" ]; then read tenant; fi\nkubectl create namespace $tenant\n"})
	if f := fateAt(res.Model, 5); f != "step" || len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "on the script's other path") {
		t.Errorf("line 5: %q; not carried %v", f, res.Model.NotCarried)
	}
}

// stoa-platform/stoa's install-litmus.sh: kubectl apply -f FILE -n NS of
// an object in another namespace fails; of a folder, the others are
// applied (46s68b's D1).
func TestTrial46s68OtherNamespace(t *testing.T) {
	cm := func(ns string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: " + ns + "}\n"
	}
	checkIdioms(t, []idiom{
		{name: "one file", script: "kubectl apply -f awx.yaml -n stoa\n", files: map[string]string{"awx.yaml": cm("awx")},
			notCarried: []string{"names a namespace other than -n stoa, which kubectl refuses"}},
		{name: "a folder", script: "kubectl apply -f d -n stoa\n", files: map[string]string{"d/a.yaml": cm("awx"), "d/b.yaml": cm("stoa")},
			want: []string{"file: ./d/b.yaml"}, notCarried: []string{"under set -e the script stops there; the step applies the others"}},
		{name: "the same namespace", script: "kubectl apply -f d -n stoa\n", files: map[string]string{"d/b.yaml": cm("stoa")},
			want: []string{"file: ./d/b.yaml"}},
	})
}

// smart-tuning's deploy-app_only.sh: apply -f DIR where one file's API is
// removed keeps the others (46s68b's D3).
func TestTrial46s68RemovedAPIInAFolder(t *testing.T) {
	res := importRemoved(t, map[string]string{"install.sh": "#!/bin/bash\nset -e\nkubectl apply -f d/\n",
		"d/good.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: g}\n",
		"d/old.yaml":  "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: old}\n"}, "old.yaml", "hpa: autoscaling/v2beta2 HorizontalPodAutoscaler was removed in v1.26")
	if s := string(res.Spec); !strings.Contains(s, "good.yaml") || strings.Contains(s, "- file: ./d/old.yaml") || len(res.Model.NotCarried) != 1 || !strings.Contains(res.Model.NotCarried[0].Why, "kubectl refuses it after it applies the others") {
		t.Errorf("not carried %v\n%s", res.Model.NotCarried, s)
	}
}

// importRemoved imports files' install.sh with validate finding every
// manifest whose file ends in file removed (each of msgs).
func importRemoved(t *testing.T, files map[string]string, file string, msgs ...string) *Result {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		write(t, dir, name, text)
	}
	check := func(s *spec.Spec) (ps spec.Problems) {
		for _, st := range s.Steps {
			for j, m := range st.Apply.Manifests {
				if strings.HasSuffix(m.File, file) {
					for _, msg := range msgs {
						ps = append(ps, spec.Problem{Path: fmt.Sprintf("%s.apply.manifests.%d", st.Path, j), Message: msg})
					}
				}
			}
		}
		return ps
	}
	res, err := Import("install.sh", Options{Dir: dir, Check: check})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// kubectl delete -f of a file holding a PVC says the step keeps it, as
// kubectl delete pvc does (46s68w1's note on 46s68e's D1).
func TestTrial46s68DeleteFileKeepsData(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "delete -f pvc.yaml", script: "kubectl delete -f pvc.yaml -n db\n",
			files: map[string]string{"pvc.yaml": "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"},
			want:  []string{"keeps a PersistentVolumeClaim (and its data) unless it says deleteData: true"}},
	})
}

// A manifest's value that is the literal a secret variable was made of
// is written as that variable (fixer 46s68w2's note on 46s68f's D4).
func TestTrial46s68EchoedSecretInManifest(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "a ConfigMap value equal to a --set password", script: "helm install db mongodb --repo https://e.com -n db --set auth.password=s3cr3t-echo\nkubectl apply -f - <<EOF\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: db}\ndata:\n  user: \"s3cr3t-echo\"\nEOF\n",
			want: []string{"user: ${AUTH_PASSWORD | toJson}"}, never: []string{"s3cr3t-echo"}},
	})
}

// ghassan8080's deploy-wordpress.sh: a check on another object than the
// step it guards makes (46s68k's D1); 46s68l's D1, 46s68k's D3: a file of a
// folder the script clones is made by the clone.
func TestTrial46s68CheckOtherAndClone(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "if ! get X; then apply Y", script: "if ! kubectl get deployment lbc -n kube-system >/dev/null 2>&1; then\n  kubectl apply -f https://e.com/cert-manager.yaml\nfi\n",
			want: []string{"only where this finds no lbc, which that step does not make; khook runs it always"}},
		{name: "if ! get ns x; then create ns x is the idempotent twin", script: "if ! kubectl get ns x; then kubectl create ns x; fi\n",
			never: []string{"which that step does not make"}},
		{name: "a file of a clone", script: "git clone --depth 1 https://github.com/k/descheduler.git\nkubectl create -f descheduler/rbac.yaml\n",
			notCarried: []string{"khook runs no shell commands", "the script makes it earlier (install.sh:3 git clone)"}},
	})
}

// vekjja/provisions' docker-mailserver.sh: an exec's in-container command
// is named by its program only (D6: its password quoted); replace --force
// is said (D7) (46s68i).
func TestTrial46s68ExecAndReplaceForce(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "kubectl exec … -- setup email add USER PASSWORD", script: "kubectl exec -n mail deploy/ms -- setup email add a@example.com s3cr3t-exec\n",
			notCarried: []string{"khook has no step for kubectl exec"}, never: []string{"s3cr3t-exec"}},
		{name: "kubectl replace --force", script: "kubectl replace --force -f cm.yaml\n", files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"},
			want: []string{"kubectl replace --force deletes each object and creates it again"}},
	})
}

// eclipse-hono's 10-deploy-cert-manager.sh: [[ "$*" =~ "--use-prod" ]] of
// known arguments is decided, a quoted RE literal (46s68m's D1).
func TestTrial46s68ReMatch(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", "#!/bin/bash\nset -e\nif [[ \"$*\" =~ \"--use-prod\" ]]; then F=b.yml; else F=a.yml; fi\nkubectl apply -f \"$F\"\nif [[ x-12 =~ ^x-[0-9]+$ ]]; then kubectl create ns re; fi\n")
	write(t, dir, "a.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	write(t, dir, "b.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	res, err := Import("install.sh", Options{Dir: dir, Args: []string{"--email", "x@y", "--use-prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(res.Spec); !strings.Contains(s, "file: ./b.yml") || !strings.Contains(s, "name: re") {
		t.Errorf("spec:\n%s", s)
	}
}

// zbitech/zbi-repo's cert-manager.sh ends inside its here-document: bash
// reads it to the end of the file and runs it (46s68o's D1).
func TestTrial46s68HeredocToEOF(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "an unclosed here-document", script: "kubectl create ns a\ncat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n",
			want: []string{"name: namespace-a", "kind: ConfigMap", "the here-document is never closed"}},
	})
}

// AMD-AGI/Primus-SaFE's harbor.sh: secretKey: beside an empty
// caSecretName is a credential still (46s68p's D4).
func TestTrial46s68EmptySiblingNamesNoSecret(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "caSecretName: \"\" beside secretKey", script: "cat <<YAML > values.yaml\ncaSecretName: \"\"\nsecretKey: \"s3cr3t-harbor-key\"\nYAML\nhelm upgrade --install harbor harbor --repo https://helm.goharbor.io -n harbor -f values.yaml\n",
			want: []string{"KHOOK_SECRET_SECRETKEY"}, never: []string{"s3cr3t-harbor-key"}},
	})
}

// rook's deploy-validate-vault.sh: a poll with no limit of its own is a
// wait with khook's default timeout, said (46s68o's D2).
func TestTrial46s68UnboundedPoll(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "while [[ $(kubectl get … jsonpath) != True ]]", script: "while [[ $(kubectl get pods -l app=web -o 'jsonpath={..status.phase}') != \"Running\" ]]; do sleep 1; done\n",
			want: []string{"the script polls without a limit of its own; the step waits khook's default timeout, 5m"}},
	})
}

// 46s68r's D7: a captured output compared in [[ ]] inside a function
// panicked; 46s68q's D1: REPO/chart beside a folder REPO/ holding no
// chart is the machine's repository, as helm reads it.
func TestTrial46s68CaptureCompareAndRepoFolder(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "[[ \"$(echo \"$d\")\" == \"$1\" ]] of a capture", script: "c() { d=$(kubectl get pv x -o json); [[ \"$(echo \"$d\")\" == \"$1\" ]]; }\nc y\nkubectl create namespace demo\n",
			want: []string{"name: namespace-demo"}},
		{name: "immich/immich beside a folder immich/", script: "helm upgrade --install -n prod immich immich/immich\n", files: map[string]string{"immich/README": "x\n"},
			want: []string{"repo: ${HELM_REPO_IMMICH}"}},
	})
}

// EqualExperts' deploy-metabase.sh: kubectl run -i … psql < dump.sql
// feeds the pod, which a job: step cannot (46s68t's D1).
func TestTrial46s68RunWithInput(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "kubectl run -i < FILE", script: "kubectl run restore --rm -i --restart=Never -n db --image=postgres:16 --command -- psql -h pg < dump.sql\n", files: map[string]string{"dump.sql": "select 1;\n"},
			notCarried: []string{"it feeds the pod's command its standard input"}},
		{name: "kubectl run -i with nothing fed is a job", script: "kubectl run smoke --rm -i --restart=Never -n db --image=curl -- curl -fsS http://web\n",
			want: []string{"job:"}},
	})
}

// harrywesterman/Twinbox's authentik-auth.sh: a retry loop that returns
// when a try passes, then exit 1: the exit is not the script's end
// (46s68s's D1: the rest of the install dropped, nothing written).
func TestTrial46s68ReturnInRetryThenExit(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "for …; do curl && return 0; sleep 1; done; exit 1", script: "f() {\n  for _ in 1 2 3; do curl -fsS http://127.0.0.1:9000/ && return 0; sleep 1; done\n  echo never; exit 1\n}\nf\nkubectl create namespace after\n",
			want: []string{"name: namespace-after", "the script stops here only where the function did not return first"}, notCarried: []string{"khook runs no shell commands", "khook runs no shell commands", "khook runs no shell commands"}},
	})
}

// github-ragil's setup-superset-nginx.sh: a config text in values that
// sets SECRET_KEY to a literal is a secret variable whole (46s68t's D3).
func TestTrial46s68ConfigTextCredential(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "configOverrides.secret: SECRET_KEY = '…'", script: "helm upgrade --install superset superset --repo https://e.com -n bi -f - <<EOF\nconfigOverrides:\n  secret: |\n    SECRET_KEY = 's3cr3t-superset'\n  other: |\n    ROW_LIMIT = 5000\nEOF\n",
			want: []string{"KHOOK_SECRET_CONFIGOVERRIDES_SECRET", "ROW_LIMIT = 5000"}, never: []string{"s3cr3t-superset"}},
	})
}

// abdulrahmanfahim's deploy-all.sh: envsubst over a ConfigMap whose
// config text sets admin_passwd to a literal (46s68t's D4).
func TestTrial46s68EnvsubstConfigCredential(t *testing.T) {
	checkIdioms(t, []idiom{
		{name: "odoo.conf's admin_passwd = literal", script: "envsubst < cm.yaml | kubectl apply -f -\n",
			files: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: odoo, namespace: default}\ndata:\n  odoo.conf: |\n    admin_passwd = s3cr3t-odoo\n    workers = 2\n"},
			want:  []string{"admin_passwd = ${ADMIN_PASSWD}", "workers = 2"}, never: []string{"s3cr3t-odoo"}},
	})
}

package shscript

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/khook/khook/internal/importer"
)

// kubectl's generators — create deployment, run, expose — make objects
// the import can write exactly as kubectl 1.37 makes them
// (k8s.io/kubectl pkg/cmd/create/create_deployment.go, run/run.go,
// expose/expose.go), so a tutorial-style script of them is an apply step
// each (trial 46s68d's N1: eighteen lines of two scripts not carried).
// expose reads the object it exposes from the cluster: carried only for
// one the script made with these generators, whose labels and ports the
// import knows.

// recordGenerated records an object a generator made, for an expose of it.
func (t *translator) recordGenerated(obj map[string]any) {
	if t.kubectlMade == nil {
		t.kubectlMade = map[string]map[string]any{}
	}
	meta := obj["metadata"].(map[string]any)
	t.kubectlMade[obj["kind"].(string)+"/"+str(meta["namespace"])+"/"+meta["name"].(string)] = obj
}

// deploymentSpec is the spec of kubectl create deployment NAME
// --image=I… [--replicas=N] [--port=P] [-- COMMAND…].
func (t *translator) deploymentSpec(x *cmd, f flags, name string, command []string) (map[string]any, bool) {
	images := f.all("image")
	if len(images) == 0 {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl create deployment needs --image (error: required flag(s) \"image\" not set), so the script's command fails")
		return nil, false
	}
	if len(images) > 1 && len(command) > 0 {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl refuses several --image with a command (error: cannot specify multiple --image options and command), so the script's command fails")
		return nil, false
	}
	var containers []any
	for _, image := range images {
		n := image[strings.LastIndex(image, "/")+1:]
		n, _, _ = strings.Cut(n, "@")
		n, _, _ = strings.Cut(n, ":")
		if strings.ContainsAny(n, "_.") {
			// kubectl appends five random letters to such a name
			t.account(x.stmt, importer.FateNotCarried, "", "kubectl names the container after the image with a random suffix ("+n+" has _ or .), which the spec cannot repeat: write the Deployment as a manifest")
			return nil, false
		}
		c := map[string]any{"name": n, "image": image}
		if len(command) > 0 {
			c["command"] = command
		}
		containers = append(containers, c)
	}
	replicas, ok := intFlag(f, "replicas", 1)
	port, ok2 := intFlag(f, "port", -1)
	if !ok || !ok2 {
		t.account(x.stmt, importer.FateNotCarried, "", "--replicas and --port take a number, which kubectl refuses otherwise; write the number in the script")
		return nil, false
	}
	if port >= 0 {
		containers[0].(map[string]any)["ports"] = []any{map[string]any{"containerPort": port}}
	}
	labels := map[string]any{"app": name}
	return map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{"metadata": map[string]any{"labels": maps.Clone(labels)}, "spec": map[string]any{"containers": containers}},
	}, true
}

// intFlag is a numeric flag's value, def when it is not given.
func intFlag(f flags, name string, def int) (int, bool) {
	v := f.get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// kRunPod is kubectl run NAME --image=I of a pod that keeps running
// (restart Always, nothing attached): an apply step with the Pod, and
// with --expose the Service; false when it is no such run.
func (t *translator) kRunPod(x *cmd, f flags) bool {
	if f.get("restart") != "" && f.get("restart") != "Always" || f.is("i", "stdin", "t", "tty", "attach", "rm") || f.get("overrides") != "" || endless.MatchString(strings.Join(f.pos[2:], " ")) {
		return false
	}
	name, ns := f.pos[1], f.get("n", "namespace")
	labels := map[string]any{"run": name}
	if l := f.get("labels"); l != "" {
		if labels = pairs(l); labels == nil {
			return false
		}
	}
	c := map[string]any{"name": name, "image": f.get("image")}
	if args := f.pos[2:]; len(args) > 0 {
		c[map[bool]string{true: "command", false: "args"}[f.is("command")]] = args
	}
	if p := f.get("image-pull-policy"); p != "" {
		c["imagePullPolicy"] = p
	}
	var env []any
	for _, e := range f.all("env") {
		k, v, _ := strings.Cut(e, "=")
		vn, ok := t.credential(x, v, importer.SecretLooking(k), varName(name+"_"+k), "the "+k+" of kubectl run "+name)
		if !ok {
			return false
		}
		if vn != "" {
			v = "${" + vn + "}"
		}
		// through toJson where a variable is in it: "true" or "007" stays
		// the string an env value must be
		env = append(env, map[string]any{"name": k, "value": refValue(v)})
	}
	if env != nil {
		c["env"] = env
	}
	port, ok := intFlag(f, "port", -1)
	if !ok || f.is("expose") && port < 0 {
		return false
	}
	if port >= 0 {
		c["ports"] = []any{map[string]any{"containerPort": port}}
	}
	meta := map[string]any{"name": name, "labels": labels}
	if ns != "" {
		meta["namespace"] = ns
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta,
		"spec": map[string]any{"containers": []any{c}, "dnsPolicy": "ClusterFirst", "restartPolicy": "Always"}}
	t.recordGenerated(pod)
	objs := []map[string]any{pod}
	if f.is("expose") {
		svcMeta := map[string]any{"name": name}
		if f.get("labels") != "" {
			svcMeta["labels"] = labels
		}
		if ns != "" {
			svcMeta["namespace"] = ns
		}
		objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": svcMeta,
			"spec": map[string]any{"selector": labels, "ports": []any{map[string]any{"port": port, "protocol": "TCP", "targetPort": port}}}})
	}
	t.generatedStep(x, objs)
	return true
}

// runGenerator names kubectl run --generator=…, a flag kubectl 1.21 and
// later refuse (unknown flag), so the script's command fails as written
// (trial 46s70f's D6: the Pod carried without a word): run-pod/v1 made the
// Pod kubectl run makes now, carried as meant; any other made another
// object (a Deployment, a Job), not carried. True when it is not carried.
func (t *translator) runGenerator(x *cmd, f flags) bool {
	g := f.get("generator")
	if g == "" {
		return false
	}
	if g != "run-pod/v1" {
		t.account(x.stmt, importer.FateNotCarried, "", "--generator="+g+" made another object than a Pod (kubectl 1.17 and earlier), and kubectl 1.21 and later refuse the flag (unknown flag: --generator), so the script's command fails as written: write the object it meant as a manifest in an apply: step")
		return true
	}
	t.notCarried(x.stmt, "--generator="+g, "kubectl 1.21 and later refuse it (unknown flag: --generator), so the script's command fails as written; the step carries the pod it meant, as kubectl run makes it now without the flag: drop --generator from the script")
	return false
}

// pairs is kubectl's k=v,k2=v2 (nil when malformed).
func pairs(s string) map[string]any {
	m := map[string]any{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil
		}
		m[k] = v
	}
	return m
}

// generatedStep is the apply step of a generator's objects.
func (t *translator) generatedStep(x *cmd, objs []map[string]any) {
	var src []importer.OutSource
	for _, obj := range objs {
		text, err := renderObject(obj)
		if err != nil {
			t.account(x.stmt, importer.FateNotCarried, "", "the object cannot be written: "+err.Error())
			return
		}
		src = append(src, importer.OutSource{Inline: text})
	}
	meta := objs[0]["metadata"].(map[string]any)
	kind := objs[0]["kind"].(string)
	key := "object/" + kind + "/" + str(meta["namespace"]) + "/" + meta["name"].(string)
	t.addStep(x.stmt, strings.ToLower(kind)+"-"+meta["name"].(string), key, &importer.OutStep{Apply: &importer.OutApply{Manifests: src}})
}

// exposeKinds are what kubectl expose takes, by the kind the import
// records.
var exposeKinds = map[string]string{"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
	"pod": "Pod", "pods": "Pod", "po": "Pod"}

// kExpose is kubectl expose KIND NAME (or KIND/NAME) of an object the
// script made with a generator: the Service kubectl makes of its labels,
// selector and ports.
func (t *translator) kExpose(x *cmd, f flags) {
	ref := f.pos[1:]
	if len(ref) == 1 {
		if k, n, ok := strings.Cut(ref[0], "/"); ok {
			ref = []string{k, n}
		}
	}
	ns := f.get("n", "namespace")
	var obj map[string]any
	if len(ref) == 2 && exposeKinds[ref[0]] != "" {
		obj = t.kubectlMade[exposeKinds[ref[0]]+"/"+ns+"/"+ref[1]]
	}
	if obj == nil || f.get("f", "filename") != "" || f.get("selector", "overrides") != "" {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl expose reads the selector and ports of "+strings.Join(ref, " ")+" from the cluster: write the Service as a manifest (kubectl expose … --dry-run=client -o yaml against the cluster) in an apply: step")
		return
	}
	svc, ok := t.exposeService(x, f, obj, ref[1])
	if !ok {
		return
	}
	t.generatedStep(x, []map[string]any{svc})
}

// exposeService is expose.go's createService over what the generator
// made: selector and labels the object's, ports --port or its
// containers', the target port --target-port or each port.
func (t *translator) exposeService(x *cmd, f flags, obj map[string]any, name string) (map[string]any, bool) {
	meta := obj["metadata"].(map[string]any)
	labels, selector := meta["labels"].(map[string]any), meta["labels"].(map[string]any)
	podSpec, _ := obj["spec"].(map[string]any)
	if tmpl, ok := podSpec["template"].(map[string]any); ok {
		selector = podSpec["selector"].(map[string]any)["matchLabels"].(map[string]any)
		podSpec = tmpl["spec"].(map[string]any)
	}
	if l := f.get("labels"); l != "" {
		if labels = pairs(l); labels == nil {
			t.account(x.stmt, importer.FateNotCarried, "", "--labels is no k=v list, which kubectl refuses")
			return nil, false
		}
	}
	var ports []string
	if p := f.get("port"); p != "" {
		ports = []string{p}
	} else {
		cs, _ := podSpec["containers"].([]any)
		for _, c := range cs {
			ps, _ := c.(map[string]any)["ports"].([]any)
			for _, p := range ps {
				ports = append(ports, strconv.Itoa(p.(map[string]any)["containerPort"].(int)))
			}
		}
	}
	if len(ports) == 0 {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl expose finds no port (error: couldn't find port via --port flag or introspection), so the script's command fails")
		return nil, false
	}
	var sp []any
	for i, p := range ports {
		n, err := strconv.Atoi(p)
		if err != nil {
			t.account(x.stmt, importer.FateNotCarried, "", "--port "+p+" is no number, which kubectl refuses")
			return nil, false
		}
		port := map[string]any{"port": n, "protocol": cmpOr(f.get("protocol"), "TCP"), "targetPort": n}
		if tp := f.get("target-port"); tp != "" {
			port["targetPort"] = tp
			if v, err := strconv.Atoi(tp); err == nil {
				port["targetPort"] = v
			}
		}
		if len(ports) > 1 {
			port["name"] = "port-" + strconv.Itoa(i+1)
		}
		sp = append(sp, port)
	}
	spec := map[string]any{"selector": maps.Clone(selector), "ports": sp}
	if ty := f.get("type"); ty != "" {
		spec["type"] = ty
	}
	for flag, field := range map[string]string{"session-affinity": "sessionAffinity", "cluster-ip": "clusterIP", "load-balancer-ip": "loadBalancerIP"} {
		if v := f.get(flag); v != "" {
			spec[field] = v
		}
	}
	if ip := f.get("external-ip"); ip != "" {
		spec["externalIPs"] = []any{ip}
	}
	svcMeta := map[string]any{"name": cmpOr(f.get("name"), name), "labels": maps.Clone(labels)}
	if ns := f.get("n", "namespace"); ns != "" {
		svcMeta["namespace"] = ns
	}
	if slices.Contains([]string{"", "ClusterIP", "NodePort", "LoadBalancer", "ExternalName"}, str(spec["type"])) {
		return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": svcMeta, "spec": spec}, true
	}
	t.account(x.stmt, importer.FateNotCarried, "", "--type "+str(spec["type"])+" is no Service type, which the API server refuses")
	return nil, false
}

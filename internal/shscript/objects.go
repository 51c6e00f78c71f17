package shscript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
)

// kCreate is `kubectl create namespace|serviceaccount|secret|configmap|
// clusterrolebinding|rolebinding NAME …`: an apply step with the object.
func (t *translator) kCreate(x *cmd, f flags) {
	obj, ok := t.createObject(x, f)
	if !ok {
		t.notCreated(x, f)
		return
	}
	text, err := renderObject(obj)
	if err != nil {
		t.account(x.stmt, importer.FateNotCarried, "", "the object cannot be written: "+err.Error())
		return
	}
	meta := obj["metadata"].(map[string]any)
	kind := obj["kind"].(string)
	name := strings.ToLower(kind) + "-" + meta["name"].(string)
	key := "object/" + kind + "/" + str(meta["namespace"]) + "/" + meta["name"].(string)
	t.addStep(x.stmt, name, key, &importer.OutStep{Apply: &importer.OutApply{Manifests: []importer.OutSource{{Inline: text}}}})
}

// notCreated remembers the object a kubectl create not carried would
// have made, its name and namespace as the walk has them ($1 and $2 of a
// function), so a delete of it before is not carried either (trial
// 46s69i's D2: tls() { kubectl delete secret $1 …; kubectl create secret
// tls $1 …; } kept the delete, which then removed the Secret on every run).
func (t *translator) notCreated(x *cmd, f flags) {
	at := t.loc(x.stmt)
	if len(f.pos) < 3 || !slices.ContainsFunc(t.m.Commands, func(c importer.Command) bool { return c.Loc == at && c.Fate == importer.FateNotCarried }) {
		return
	}
	kind, pos := f.pos[1], f.pos[2:]
	if kind == "secret" && len(pos) > 1 {
		pos = pos[1:] // secret tls NAME
	}
	if k := recreatedKinds[strings.ToLower(kind)]; k != "" && len(pos) == 1 {
		t.uncreated = append(t.uncreated, copied{at: at, kind: kind, name: pos[0], to: f.get("n", "namespace")})
	}
}

func str(v any) string { s, _ := v.(string); return s }

// createObject builds the object kubectl create would; ok false when it
// cannot (accounted for).
func (t *translator) createObject(x *cmd, f flags) (map[string]any, bool) {
	kind, pos := f.pos[1], f.pos[2:]
	if (kind == "secret" || kind == "service" || kind == "svc") && len(pos) > 0 {
		kind, pos = strings.Replace(kind, "svc", "service", 1)+" "+pos[0], pos[1:]
	}
	var command []string
	if (kind == "deployment" || kind == "deploy") && len(pos) > 1 {
		pos, command = pos[:1], pos[1:] // -- COMMAND…
	}
	if len(pos) != 1 {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl create "+kind+" without one name; write the object as a manifest")
		return nil, false
	}
	name, ns := pos[0], f.get("n", "namespace")
	meta := map[string]any{"name": name}
	obj := map[string]any{"metadata": meta}
	set := func(apiVersion, k string, namespaced bool) {
		obj["apiVersion"], obj["kind"] = apiVersion, k
		if namespaced && ns != "" {
			meta["namespace"] = ns
		}
	}
	switch kind {
	case "namespace", "ns":
		set("v1", "Namespace", false)
	case "serviceaccount", "sa":
		set("v1", "ServiceAccount", true)
	case "secret generic":
		set("v1", "Secret", true)
		data, ok := t.secretData(x, f, name)
		if !ok {
			return nil, false
		}
		obj["type"], obj["stringData"] = "Opaque", data
	case "secret docker-registry":
		set("v1", "Secret", true)
		config, ok := t.dockerConfig(x, f, name)
		if !ok {
			return nil, false
		}
		obj["type"], obj["stringData"] = "kubernetes.io/dockerconfigjson", map[string]any{".dockerconfigjson": config}
	case "configmap", "cm":
		set("v1", "ConfigMap", true)
		data, ok := t.configData(x, f, name)
		if !ok {
			return nil, false
		}
		obj["data"] = data
	case "service clusterip", "service nodeport", "service loadbalancer":
		set("v1", "Service", true)
		spec, ok := t.serviceSpec(x, f, name, kind[len("service "):])
		if !ok {
			return nil, false
		}
		meta["labels"] = map[string]any{"app": name}
		obj["spec"] = spec
	case "deployment", "deploy":
		set("apps/v1", "Deployment", true)
		spec, ok := t.deploymentSpec(x, f, name, command)
		if !ok {
			return nil, false
		}
		meta["labels"], obj["spec"] = map[string]any{"app": name}, spec
		t.recordGenerated(obj)
	case "clusterrole", "role":
		k := "ClusterRole"
		if kind == "role" {
			k = "Role"
		}
		set("rbac.authorization.k8s.io/v1", k, kind == "role")
		rules, ok := t.policyRules(x, f, kind == "clusterrole")
		if !ok {
			return nil, false
		}
		obj["rules"] = rules
	case "clusterrolebinding", "rolebinding":
		k := "ClusterRoleBinding"
		if kind == "rolebinding" {
			k = "RoleBinding"
		}
		set("rbac.authorization.k8s.io/v1", k, kind == "rolebinding")
		if !t.binding(x, f, obj) {
			return nil, false
		}
	case "token":
		// a TokenRequest: kubectl prints the token, the cluster keeps
		// nothing, and it has no --dry-run (trial 46s69d's D1: that advice)
		t.account(x.stmt, importer.FateReadOnly, "", "kubectl create token prints a short-lived token of the service account and stores nothing in the cluster; run it after khook where the token is needed")
		return nil, false
	default:
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl create "+kind+": write the object as a manifest (kubectl create "+kind+" … --dry-run=client -o yaml) and apply it")
		return nil, false
	}
	return obj, true
}

// userKey is a Secret key that names a user, whose value is no secret.
var userKey = regexp.MustCompile(`(?i)^(?:.*[_.-])?(?:user|username|user_name|login)$`)

// literalSecret masks a --from-literal's value in every note; a user
// name's (POSTGRES_USER=postgres) only as the key's, in the line that
// gives it: masked everywhere it blurred every note naming the pod or
// container it is also the name of (trial 46s69m's D5). It is still a
// secret variable.
func (t *translator) literalSecret(k, v string, _ bool) { // k, v, found: strings.Cut's
	if !userKey.MatchString(k) {
		t.secret(v)
		return
	}
	if v == "" || strings.Contains(v, "${") {
		return
	}
	for _, q := range []string{"", `"`, "'"} {
		t.rd.Found(k + "=" + q + v + q)
	}
}

// secretData is a Secret's stringData: every literal becomes a secret
// variable, never its value; files are not read into the spec.
func (t *translator) secretData(x *cmd, f flags, name string) (map[string]any, bool) {
	data := map[string]any{}
	for _, fl := range f.list {
		switch fl.name {
		case "from-literal":
			k, v, _ := strings.Cut(fl.val, "=")
			if strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}") && strings.Count(v, "${") == 1 {
				if dv := t.m.Var(v[2 : len(v)-1]); dv != nil && (dv.Secret || !dv.Computed) {
					// a variable of the environment keeps the script's name
					// (made a secret one by secretsInSecrets), never one
					// named after the key (trial 46s69i's D5: ADMIN_USER
					// became GITEA_ADMIN_USERNAME, and was never said)
					data[k] = asJSON(v[2 : len(v)-1])
					continue
				}
			}
			if t.refsSecretText(v) {
				// cloud="[default]\naws_access_key_id=${KEY_ID}…": the text
				// with its variables, so its form stays the script's (46ze D8)
				data[k] = refValue(v)
				continue
			}
			t.literalSecret(k, v, true)
			vn := varName(name + "_" + k)
			if !strings.Contains(v, "${") && v != "" {
				// --from-literal=username=app_user: the script's value is not copied
				t.info(x.stmt, "key "+k+" of Secret "+name, "the script's literal value is not copied into the spec: give it as KHOOK_SECRET_"+vn)
			}
			// the script always gives it a value: never an empty one unasked
			t.ref(&importer.Var{Name: vn, Secret: true, Required: !strings.Contains(v, "${") || t.given(v), From: t.loc(x.stmt), Description: "key " + k + " of Secret " + name})
			data[k] = asJSON(vn)
		case "from-file", "from-env-file":
			t.account(x.stmt, importer.FateNotCarried, "", "Secret "+name+" from a file: khook never copies a file's content into the spec; apply it as a sops-encrypted manifest or build it from secret variables")
			return nil, false
		case "type":
			t.account(x.stmt, importer.FateNotCarried, "", "a Secret of a set type: write it as a manifest with secret variables")
			return nil, false
		}
	}
	return data, true
}

// refsSecretText: v is a text made of declared variables, a secret one
// or one the script computes among them, and words that hold no
// credential (no password=literal). A computed one stays named where the
// script computes it ("server: https://${host}:6443" of host=$(docker
// inspect …): trial 46s69a's D7, the docker inspect never named).
func (t *translator) refsSecretText(v string) bool {
	refs := varRef.FindAllStringSubmatch(v, -1)
	secret := false
	for _, m := range refs {
		d := t.m.Var(m[1])
		if d == nil {
			return false
		}
		secret = secret || d.Secret || d.Computed
	}
	if !secret {
		return false
	}
	for _, w := range strings.Fields(varRef.ReplaceAllString(v, "")) {
		k, val, ok := strings.Cut(w, "=")
		if !ok {
			k, val, ok = strings.Cut(w, ":")
		}
		if ok && strings.Trim(val, `"' `) != "" && (importer.SecretKey(k) || secretLooking(k)) {
			return false
		}
	}
	return true
}

// literalText is a file's text as the spec takes it: a ${…} in it is the
// file's own, literal ($${…}), never a khook variable.
func literalText(s string) string { return unmarkRefs(s, true) }

// dockerConfig is `kubectl create secret docker-registry`'s config:
// {"auths": {server: {username, password, email}}}, each value through
// sprig's toJson so a quote in a password stays JSON (the kubelet reads
// username and password without the "auth" kubectl adds). A literal
// password becomes a secret variable, as --from-literal does.
func (t *translator) dockerConfig(x *cmd, f flags, name string) (*yaml.Node, bool) {
	if f.get("from-file") != "" {
		t.account(x.stmt, importer.FateNotCarried, "", "Secret "+name+" from a docker config file: khook never copies a file's content into the spec; apply it as a sops-encrypted manifest")
		return nil, false
	}
	server := f.get("docker-server")
	if server == "" {
		server = "https://index.docker.io/v1/" // kubectl's default
	}
	entry := func(key, v string, secret bool) (string, bool) {
		vn, ok := t.credential(x, v, secret, varName(name+"_"+key), "the --docker-"+key+" of Secret "+name)
		switch {
		case !ok:
			t.account(x.stmt, importer.FateNotCarried, "", "the --docker-"+key+" of Secret "+name+" is built from several values; write the Secret as a manifest with secret variables")
			return "", false
		case vn != "":
			return "${" + vn + " | toJson}", true
		}
		b, _ := json.Marshal(v)
		return string(b), true
	}
	srv, ok1 := entry("server", server, false)
	user, ok2 := entry("username", f.get("docker-username"), false)
	pass, ok3 := entry("password", f.get("docker-password"), true)
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	fields := `"username":` + user + `,"password":` + pass
	if e := f.get("docker-email"); e != "" {
		email, ok := entry("email", e, false)
		if !ok {
			return nil, false
		}
		fields += `,"email":` + email
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.LiteralStyle, Value: `{"auths":{` + srv + `:{` + fields + `}}}`}, true
}

// credential is a credential the script passes (a registry's, a
// repository's, a docker-registry Secret's): a single ${NAME} stays that
// variable, made a secret one (desc says what it is) when secret; a
// literal secret becomes the secret variable vn, never written; vn is ""
// for a literal kept as it is; ok is false for a value built of several.
func (t *translator) credential(x *cmd, v string, secret bool, vn, desc string) (string, bool) {
	if isRef(v) {
		if dv := t.m.Var(v[2 : len(v)-1]); dv != nil {
			if secret && !dv.Secret {
				// a secret has no default; required stays as the script
				// said (a check that stops without it)
				dv.Secret, dv.Default, dv.Example = true, nil, ""
				dv.Description = desc
			}
			return dv.Name, true
		}
	}
	if strings.Contains(v, "${") {
		return "", false
	}
	if !secret {
		return "", true
	}
	t.secret(v)
	t.ref(&importer.Var{Name: vn, Secret: true, Required: true, From: t.loc(x.stmt), Description: desc})
	return vn, true
}

// asJSON is a secret variable's whole value as a YAML scalar that holds
// any text, through sprig's toJson: a JSON string is a double-quoted YAML
// one, while "${NAME}" breaks on a line break or a quote in the value
// (trial 46s67h's D3: a multi-line credentials file).
func asJSON(name string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "${" + name + " | toJson}"}
}

// refValue is a --from-literal value with variables in it: one variable,
// alone or in text, goes through toJson (printf puts the text around it),
// so a quote or a backslash in the value stays the value, where "${X}"
// breaks the YAML or reads \t as a TAB (trial 46s67l's D2); the text of
// several variables stays double-quoted, as written.
func refValue(v string) *yaml.Node {
	refs := varRef.FindAllStringSubmatchIndex(v, -1)
	if len(refs) != 1 || strings.Contains(v, "$${") {
		return quoted(v)
	}
	name := v[refs[0][2]:refs[0][3]]
	before, after := v[:refs[0][0]], v[refs[0][1]:]
	pipe := ""
	if before != "" || after != "" {
		pipe = " | printf " + strconv.Quote(strings.ReplaceAll(before, "%", "%%")+"%s"+strings.ReplaceAll(after, "%", "%%"))
	}
	if strings.ContainsAny(pipe, "}{\n#") || strings.Contains(pipe, ": ") || strings.Count(pipe, "|") > 1 {
		return quoted(v) // what a ${} pipeline or a plain YAML scalar cannot hold
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "${" + name + pipe + " | toJson}"}
}

func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

// configData is a ConfigMap's data: literals and files as they are at
// import, but a credential among them (a secret-looking key of an env
// file: DJANGO_SECRET_KEY, a URL with a password) becomes a secret
// variable, as a Secret's literal does, never its value (trial 46v's D1:
// a .env copied into the spec); a file that holds a secret is not read.
func (t *translator) configData(x *cmd, f flags, name string) (map[string]any, bool) {
	data := map[string]any{}
	put := func(k, v string) {
		if !strings.Contains(v, "${") && (secretLooking(k) || importer.SecretKey(k) || importer.URLCredentials(v)) {
			t.secret(v)
			vn := varName(name + "_" + k)
			t.info(x.stmt, "key "+k+" of ConfigMap "+name, "a credential: the script's value is not copied into the spec: give it as KHOOK_SECRET_"+vn)
			t.ref(&importer.Var{Name: vn, Secret: true, Required: true, From: t.loc(x.stmt), Description: "key " + k + " of ConfigMap " + name})
			v = "${" + vn + "}"
		}
		data[k] = refValue(v)
	}
	for _, fl := range f.list {
		switch fl.name {
		case "from-literal":
			k, v, _ := strings.Cut(fl.val, "=")
			if t.clusterSecretLiteral(x, name, k, v) {
				return nil, false
			}
			put(k, v)
		case "from-file", "from-env-file":
			k, p, ok := strings.Cut(fl.val, "=")
			if !ok {
				k, p = filepath.Base(fl.val), fl.val
			}
			if st, err := os.Stat(t.abs(p)); err == nil && st.IsDir() && fl.name == "from-file" && !ok {
				if !t.configDir(x, name, p, data) {
					return nil, false
				}
				continue
			}
			if fl.name == "from-file" {
				v, ok := t.configFile(x, name, p)
				if !ok {
					return nil, false
				}
				data[k] = v
				continue
			}
			b, err := readFile(t.abs(p))
			if err != nil {
				t.account(x.stmt, importer.FateNotCarried, "", "its file "+p+" cannot be read at import")
				return nil, false
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				line := strings.TrimSpace(sc.Text())
				if ek, ev, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
					if !secretLooking(ek) && !importer.SecretKey(ek) {
						ev = literalText(ev)
					}
					put(ek, ev)
				}
			}
		}
	}
	if len(data) > 0 {
		t.info(x.stmt, "ConfigMap data", "the literals and files it names are written into the spec as they are at import")
	}
	return data, true
}

// secretFile says why a file's text is a secret ("" when it is not): its
// name (tls.key, password.txt), a private key, or a credential literal
// under a credential key (a Keycloak realm's "secret": "…", "password":
// "…": trial 46zx's D7, copied into the spec).
func secretFile(name string, b []byte) string {
	switch {
	case secretLooking(name):
		return "a secret by its name"
	case importer.PrivateKey(string(b)):
		return "a private key"
	}
	text := string(b)
	for _, i := range credentialPair.FindAllStringSubmatchIndex(text, -1) {
		m := []string{text[i[0]:i[1]], text[i[2]:i[3]], text[i[4]:i[5]]}
		if line := strings.TrimSpace(text[strings.LastIndex(text[:i[0]], "\n")+1 : i[0]]); strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") || strings.HasPrefix(line, "//") {
			continue // #smtp.password = …: commented out, no credential (46zzg's D6)
		}
		if importer.SecretKey(m[1]) && !importer.NoCredential(m[1], m[2], nil) && !strings.ContainsAny(m[2], "${}<>") && !placeholder.MatchString(m[2]) {
			return "which holds a credential (" + m[1] + ")"
		}
	}
	return ""
}

// placeholder is a value that stands for one to give (insert-your-token-here).
// Narrow on purpose: a value it takes for one is copied into the spec.
var placeholder = regexp.MustCompile(`(?i)^(insert|enter|put|replace)[-_].*[-_]here$|^changeme$|^change[-_]me$|^<?placeholder>?$|^x{3,}$`)

// credentialPair is key: value or "key": "value" (YAML, JSON, an env file).
var credentialPair = regexp.MustCompile(`(?m)["']?([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[:=]\s*["']?([^"'\s,{}\[\]#]{4,})`)

// configKey is a key kubectl takes from a file's name.
var configKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// configDir is --from-file=DIR as kubectl reads it: a key per regular
// file directly in DIR, named by the file (other entries and names that
// are no key left out), its text the value (trial 46zd's D5, an Ethereum
// network's genesis/); a file the script copies or edits there before is
// its text then (46zx's D4).
func (t *translator) configDir(x *cmd, name, dir string, data map[string]any) bool {
	entries, err := os.ReadDir(t.abs(dir))
	if err != nil {
		t.account(x.stmt, importer.FateNotCarried, "", "its folder "+dir+" cannot be read at import")
		return false
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	for key := range t.wrote {
		if filepath.Dir(key) == t.abs(dir) && !slices.Contains(names, filepath.Base(key)) {
			names = append(names, filepath.Base(key))
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if !configKey.MatchString(n) {
			continue
		}
		v, ok := t.configFile(x, name, filepath.Join(dir, n))
		if !ok {
			return false
		}
		data[n] = v
	}
	return true
}

// configFile is the text --from-file takes from p: the script's own
// (cp, sed -i, a here-document before it) or the committed file's; false,
// said, when it is unknown, unreadable, binary or a secret.
func (t *translator) configFile(x *cmd, name, p string) (string, bool) {
	text, raw := "", true
	if w, ok, known := t.readWritten(x, p); ok {
		if !known {
			return "", false // said there
		}
		text, raw = w, false
	} else {
		b, err := readFile(t.abs(p))
		if err != nil {
			t.account(x.stmt, importer.FateNotCarried, "", "its file "+p+" cannot be read at import")
			return "", false
		}
		text = string(b)
	}
	switch why := secretFile(filepath.Base(p), []byte(text)); {
	case why != "":
		t.account(x.stmt, importer.FateNotCarried, "", "ConfigMap "+name+" from "+p+", "+why+": khook never copies a secret file's content into the spec; make it a Secret from secret variables")
		return "", false
	case !utf8.ValidString(text):
		t.account(x.stmt, importer.FateNotCarried, "", "ConfigMap "+name+" from "+p+", a binary file (kubectl's binaryData): write the ConfigMap as a manifest")
		return "", false
	case raw:
		return literalText(text), true // k6's `user_${__VU}` stays the file's
	}
	return text, true
}

func (t *translator) binding(x *cmd, f flags, obj map[string]any) bool {
	role, roleKind := f.get("clusterrole"), "ClusterRole"
	if r := f.get("role"); r != "" {
		role, roleKind = r, "Role"
	}
	if role == "" {
		t.account(x.stmt, importer.FateNotCarried, "", "a binding without --clusterrole or --role")
		return false
	}
	obj["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": role}
	var subjects []any
	for _, fl := range f.list {
		switch fl.name {
		case "serviceaccount":
			ns, n, found := strings.Cut(fl.val, ":")
			if !found || n == "" || strings.Contains(fl.val, "${") {
				// --serviceaccount="${SA}", SA computed when the script
				// runs: its namespace:name split only the run knows (found
				// with trial 46s69g's D2: subject name "", namespace ${SA})
				t.account(x.stmt, importer.FateNotCarried, "", "--serviceaccount "+fl.val+" is not a NAMESPACE:NAME khook can read at import: write the binding as a manifest with its subject's namespace and name")
				return false
			}
			subjects = append(subjects, map[string]any{"kind": "ServiceAccount", "name": n, "namespace": ns})
		case "user", "group":
			k := "User"
			if fl.name == "group" {
				k = "Group"
			}
			subjects = append(subjects, map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": k, "name": fl.val})
		}
	}
	obj["subjects"] = subjects
	return true
}

// serviceSpec is kubectl create service TYPE NAME --tcp=PORT[:TARGET]'s
// spec: a port per --tcp (named PORT-TARGET), selector app: NAME.
func (t *translator) serviceSpec(x *cmd, f flags, name, typ string) (map[string]any, bool) {
	var ports []any
	for _, fl := range f.list {
		if fl.name != "tcp" {
			continue
		}
		for _, pt := range strings.Split(fl.val, ",") {
			p, target, ok := strings.Cut(pt, ":")
			if !ok {
				target = p
			}
			pn, err1 := strconv.Atoi(p)
			tn, err2 := strconv.Atoi(target)
			if err1 != nil || err2 != nil {
				t.account(x.stmt, importer.FateNotCarried, "", "kubectl create service with --tcp="+pt+", ports only known when the script runs: write the Service as a manifest")
				return nil, false
			}
			port := map[string]any{"name": p + "-" + target, "port": pn, "protocol": "TCP", "targetPort": tn}
			if np := f.get("node-port"); np != "" && typ == "nodeport" {
				n, err := strconv.Atoi(np)
				if err != nil {
					t.account(x.stmt, importer.FateNotCarried, "", "kubectl create service with --node-port="+np+": write the Service as a manifest")
					return nil, false
				}
				port["nodePort"] = n
			}
			ports = append(ports, port)
		}
	}
	if len(ports) == 0 {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl create service without --tcp: write the Service as a manifest")
		return nil, false
	}
	spec := map[string]any{"ports": ports, "selector": map[string]any{"app": name},
		"type": map[string]string{"clusterip": "ClusterIP", "nodeport": "NodePort", "loadbalancer": "LoadBalancer"}[typ]}
	if ip := f.get("clusterip"); ip != "" && typ == "clusterip" {
		spec["clusterIP"] = ip
	}
	return spec, true
}

// resourceGroups are the API groups of the resources kubectl create role
// is given most often without one: kubectl asks the cluster's discovery,
// the import cannot (another resource without a group is not carried).
var resourceGroups = map[string]string{
	"pods": "", "pods/log": "", "pods/exec": "", "services": "", "endpoints": "", "configmaps": "", "secrets": "",
	"serviceaccounts": "", "persistentvolumeclaims": "", "persistentvolumes": "", "events": "", "namespaces": "",
	"nodes": "", "replicationcontrollers": "", "resourcequotas": "", "limitranges": "",
	"deployments": "apps", "statefulsets": "apps", "daemonsets": "apps", "replicasets": "apps",
	"jobs": "batch", "cronjobs": "batch", "ingresses": "networking.k8s.io", "networkpolicies": "networking.k8s.io",
	"roles": "rbac.authorization.k8s.io", "rolebindings": "rbac.authorization.k8s.io",
	"clusterroles": "rbac.authorization.k8s.io", "clusterrolebindings": "rbac.authorization.k8s.io",
	"customresourcedefinitions": "apiextensions.k8s.io", "leases": "coordination.k8s.io",
	"horizontalpodautoscalers": "autoscaling", "poddisruptionbudgets": "policy",
}

// policyRules are kubectl create role's rules: one per API group of the
// --resource list (resource.group, resource/subresource), each with every
// --verb and --resource-name, as kubectl makes them; a ClusterRole's
// --non-resource-url one rule more.
func (t *translator) policyRules(x *cmd, f flags, cluster bool) ([]any, bool) {
	var verbs, resources, names, urls []string
	for _, fl := range f.list {
		vals := strings.Split(fl.val, ",")
		switch fl.name {
		case "verb":
			verbs = append(verbs, vals...)
		case "resource":
			resources = append(resources, vals...)
		case "resource-name":
			names = append(names, fl.val)
		case "non-resource-url":
			urls = append(urls, vals...)
		}
	}
	if len(verbs) == 0 || len(resources) == 0 && (!cluster || len(urls) == 0) {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl create role without --verb and --resource: write the object as a manifest")
		return nil, false
	}
	var groups []string
	byGroup := map[string][]string{}
	for _, r := range resources {
		res, sub, _ := strings.Cut(r, "/")
		name, group, dotted := strings.Cut(res, ".")
		if !dotted {
			g, known := resourceGroups[r]
			if !known {
				g, known = resourceGroups[res]
			}
			if !known {
				t.account(x.stmt, importer.FateNotCarried, "", "kubectl finds the API group of --resource="+r+" in the cluster's discovery, which the import cannot read: write the Role as a manifest (kubectl create role … --dry-run=client -o yaml against your cluster)")
				return nil, false
			}
			group = g
		}
		if sub != "" {
			name += "/" + sub
		}
		if _, seen := byGroup[group]; !seen {
			groups = append(groups, group)
		}
		byGroup[group] = append(byGroup[group], name)
	}
	slices.Sort(groups) // kubectl: one rule per group, in the groups' order
	var rules []any
	for _, g := range groups {
		rule := map[string]any{"apiGroups": []any{g}, "resources": toAny(byGroup[g]), "verbs": toAny(verbs)}
		if len(names) > 0 {
			rule["resourceNames"] = toAny(names)
		}
		rules = append(rules, rule)
	}
	if len(urls) > 0 {
		rules = append(rules, map[string]any{"nonResourceURLs": toAny(urls), "verbs": toAny(verbs)})
	}
	return rules, true
}

func toAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// renderObject writes an object as YAML in kubectl's key order.
func renderObject(obj map[string]any) (string, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range []string{"apiVersion", "kind", "metadata", "type", "roleRef", "subjects", "rules", "spec", "data", "stringData"} {
		if v, ok := obj[k]; ok {
			var vn yaml.Node
			if err := vn.Encode(v); err != nil {
				return "", err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &vn)
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	return b.String(), nil
}

// pipe is `producer | kubectl apply -f -` (and output filters after a
// command: `kubectl apply … | grep -v Warning`).
// diffFed: a pipeline into kubectl diff (MetalLB's kubectl get cm
// kube-proxy -o yaml | sed … | kubectl diff -f -) shows a change and
// makes none: each helm and kubectl of it is read-only.
func (t *translator) diffFed(stages []*syntax.Stmt) bool {
	last, ok := stages[len(stages)-1].Cmd.(*syntax.CallExpr)
	if !ok || len(last.Args) < 2 || toolName(lit(last.Args[0])) == "" {
		return false
	}
	x := t.newCmd(stages[len(stages)-1], last)
	if f := parseFlags(x.args[1:], kubectlValued); len(f.pos) == 0 || f.pos[0] != "diff" {
		return false
	}
	for _, st := range stages {
		if runsTool(st) {
			t.account(st, importer.FateReadOnly, "", "kubectl diff shows what would change, and changes nothing")
		}
	}
	return true
}

func (t *translator) pipe(s *syntax.Stmt, c *syntax.BinaryCmd) {
	var stages []*syntax.Stmt
	var flatten func(st *syntax.Stmt)
	flatten = func(st *syntax.Stmt) {
		if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, st)
	}
	flatten(s)
	for i, st := range stages {
		stages[i] = t.plainStage(st)
	}
	if t.inLoop > 0 && t.crdGrep(stages) || t.xargs(stages) || t.loginFed(stages) || t.diffFed(stages) {
		return
	}
	if sed := catSed(stages); sed != nil {
		t.stmt(sed)
		return
	}
	for i, st := range stages {
		if i > 0 && t.readsStdin(st) && (i == len(stages)-1 || !t.localMeta(st)) {
			t.pipeTo, t.pipeToStmt, t.pipeNS = lit(st.Cmd.(*syntax.CallExpr).Args[0]), st, t.applyNS(st)
			in, ok := t.produce(stages[:i])
			t.pipeTo, t.pipeToStmt, t.pipeNS = "", nil, ""
			if !ok {
				if runsTool(stages[0]) {
					// kubectl create … | kubectl apply -f -: two commands,
					// the first named where it cannot be carried (trial 46v's D4)
					t.account(st, importer.FateNotCarried, "", "it reads what "+t.text(stages[0].Cmd)+" prints, which is not carried (named at its line)")
				}
				return
			}
			if in == nil { // helm template: carried as a helm step
				return
			}
			call, _ := st.Cmd.(*syntax.CallExpr)
			t.call(st, call, in)
			return
		}
	}
	if c, ok := stages[0].Cmd.(*syntax.CallExpr); ok && len(c.Args) > 0 && (lit(c.Args[0]) == "curl" || lit(c.Args[0]) == "wget") {
		if last, ok := stages[len(stages)-1].Cmd.(*syntax.CallExpr); ok && len(last.Args) > 0 && (lit(last.Args[0]) == "sh" || lit(last.Args[0]) == "bash") {
			// an installer, said once (trial 46s67b's N2: also "calls a service's API")
			t.notCarried(s, t.text(s), "a downloaded script khook cannot read; run it before khook or in a job: step")
			return
		}
	}
	t.stmt(stages[0])
	// A later stage that runs helm or kubectl (`echo "$T" | helm registry
	// login --password-stdin`) is accounted for at its line too; others
	// (grep, yq) only filter output.
	// One that acts on its own (curl … | $ISTIOCTL_CMD install -f -) is
	// named as any command khook does not run.
	for _, st := range stages[1:] {
		if tool := t.xargsTool(st); tool != "" {
			// kubectl get nodes -o name | xargs -I@ kubectl taint nodes @ …
			// (trial 46s67o's D2: in no count)
			t.account(st, importer.FateNotCarried, "", "a "+tool+" command xargs runs for each line "+t.text(stages[0].Cmd)+" prints, which only the run knows: write it out for each object in the script to import it")
			continue
		}
		if runsTool(st) || !passive(st) {
			t.stmt(st)
		}
	}
}

// catSed is cat FILE | sed 's/…/…/' > out as the sed FILE > out it is
// (trial 46s68a's D1: the cat named as a command khook does not run, the
// file it filled as made by nothing); nil when the pipe is not that.
func catSed(stages []*syntax.Stmt) *syntax.Stmt {
	if len(stages) != 2 || !isCommand(stages[0], "cat") || !isCommand(stages[1], "sed") || len(stages[0].Redirs) > 0 || !writesFile(stages[1]) {
		return nil
	}
	cat, sed := stages[0].Cmd.(*syntax.CallExpr), stages[1].Cmd.(*syntax.CallExpr)
	if len(cat.Args) != 2 || strings.HasPrefix(lit(cat.Args[1]), "-") {
		return nil
	}
	args := append(slices.Clone(sed.Args), cat.Args[1])
	return &syntax.Stmt{Position: stages[0].Position, Cmd: &syntax.CallExpr{Assigns: sed.Assigns, Args: args}, Redirs: stages[1].Redirs}
}

// passive: a later stage of a pipe that only passes on, filters or
// keeps what it is fed (grep, sed, tee, base64), or the shell a download
// is piped to (said with the download).
func passive(s *syntax.Stmt) bool {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return true
	}
	name := lit(c.Args[0])
	return filters(s) || passiveCmd[name] || housekeeping[name]
}

var passiveCmd = set("sh", "bash", "tee", "sed", "base64", "cat", "envsubst", "xargs", "column", "less", "more", "gzip", "gunzip", "tar", "openssl", "python", "python3", "md5sum", "sha256sum", "shasum", "jq", "yq", "xclip", "pbcopy")

// readsStdin: kubectl apply|create|replace|delete -f -.
// xargs is `ls -d manifests/* | xargs -I{} kubectl apply -f {}` (also
// `-n1`, or the item appended): the command once per path ls lists at
// import (its globs matched as bash does), each walked as a line of the
// script. false when the pipe is not that.
func (t *translator) xargs(stages []*syntax.Stmt) bool {
	if len(stages) != 2 || !isCommand(stages[0], "ls") || !isCommand(stages[1], "xargs") {
		return false
	}
	ls := t.newCmd(stages[0], stages[0].Cmd.(*syntax.CallExpr))
	xa := t.newCmd(stages[1], stages[1].Cmd.(*syntax.CallExpr))
	if !ls.ok || !xa.ok {
		return false
	}
	var items []string
	for _, a := range ls.args[1:] {
		switch {
		case a == "-d" || a == "-1":
		case strings.HasPrefix(a, "-"):
			return false // -l, -R: not one path per line
		default:
			items = append(items, a)
		}
	}
	repl, args := "", xa.args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch a := args[0]; {
		case a == "-I" && len(args) > 1:
			repl, args = args[1], args[2:]
		case strings.HasPrefix(a, "-I"):
			repl, args = a[2:], args[1:]
		case a == "-n1" || a == "-L1" || a == "-r" || a == "--no-run-if-empty":
			args = args[1:]
		case (a == "-n" || a == "-L") && len(args) > 1 && args[1] == "1":
			args = args[2:]
		default:
			return false
		}
	}
	if len(items) == 0 || len(args) == 0 || !isTool(args[0]) {
		return false
	}
	for _, it := range items {
		q, err := syntax.Quote(it, syntax.LangBash)
		if err != nil {
			return false
		}
		var words []string
		for _, a := range args {
			w, err := syntax.Quote(a, syntax.LangBash)
			if err != nil {
				return false
			}
			if repl != "" {
				w = strings.ReplaceAll(a, repl, it)
				if w, err = syntax.Quote(w, syntax.LangBash); err != nil {
					return false
				}
			}
			words = append(words, w)
		}
		if repl == "" {
			words = append(words, q)
		}
		t.walkText(strings.Join(words, " "), stages[1]) // quoted words: it parses
	}
	return true
}

// crdGrep is `kubectl get crd | grep -q widgets.example.com` in a loop's
// turn (a retry until it holds: zalando's run_operator_locally.sh): the
// wait for that CRD, Established, which the custom resources after it
// need. false when the pipe is not that.
func (t *translator) crdGrep(stages []*syntax.Stmt) bool {
	if len(stages) != 2 {
		return false
	}
	get, ok1 := stages[0].Cmd.(*syntax.CallExpr)
	grep, ok2 := stages[1].Cmd.(*syntax.CallExpr)
	if !ok1 || !ok2 || len(get.Args) < 3 || len(grep.Args) < 3 || lit(grep.Args[0]) != "grep" {
		return false
	}
	x := t.newCmd(stages[0], get)
	f := parseFlags(x.args[1:], kubectlValued)
	if (x.args[0] != "kubectl" && x.args[0] != "oc") || len(f.pos) != 2 || f.pos[0] != "get" || !isCRD(f.pos[1]+"/x") {
		return false
	}
	g := t.newCmd(stages[1], grep)
	quiet, name := false, ""
	for _, a := range g.args[1:] {
		switch {
		case a == "--quiet" || a == "--silent" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "qs") && strings.Trim(a, "-qswF") == "":
			quiet = true
		case strings.HasPrefix(a, "-"):
			return false
		case name == "":
			name = a
		default:
			return false
		}
	}
	if !quiet || !g.ok || !regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+$`).MatchString(name) {
		return false
	}
	t.addStep(stages[0], "wait-crd-"+name, "", &importer.OutStep{Wait: &importer.OutWait{For: "condition=Established", On: "crd/" + name}})
	t.info(stages[0], t.text(stages[0])+" | grep", "a loop until CRD "+name+" is listed: carried as the wait for it to be Established")
	return true
}

func (t *translator) readsStdin(st *syntax.Stmt) bool {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return false
	}
	return t.readsStdinCall(c, 0)
}

// readsStdinCall is readsStdin of one command; a function of the script
// reads the pipe when a command of it does (kubectl_create -f=-, its
// kubectl given "$@"): not a kubectl exec -i, whose stdin goes to the
// container (46zzh's D3: SQL piped into psql_exec).
func (t *translator) readsStdinCall(c *syntax.CallExpr, depth int) bool {
	tool := lit(c.Args[0])
	if f := t.funcs[tool]; f != nil {
		found := false
		syntax.Walk(f.decl.Body, func(n syntax.Node) bool {
			if b, ok := n.(*syntax.CallExpr); ok && len(b.Args) > 0 && depth < 10 && !found {
				passes := slices.ContainsFunc(b.Args, allArgs)
				found = t.funcs[lit(b.Args[0])] != f && t.readsStdinCall(b, depth+1) || passes && isTool(lit(b.Args[0])) && t.readsStdinCall(&syntax.CallExpr{Args: append(b.Args[:1:1], c.Args[1:]...)}, depth+1)
			}
			return !found
		})
		return found
	}
	long := map[string]string{"kubectl": "--filename", "oc": "--filename", "helm": "--values"}[tool]
	if long == "" || tool == "helm" && len(c.Args) > 1 && lit(c.Args[1]) == "template" {
		return false // helm template | kubectl apply: the helm step, made at the apply
	}
	for i, w := range c.Args {
		if (lit(w) == "-f" || lit(w) == long) && i+1 < len(c.Args) && lit(c.Args[i+1]) == "-" {
			return true
		}
		if lit(w) == "-f=-" || lit(w) == "-f-" || lit(w) == long+"=-" { // pflag reads -f- as -f -
			return true
		}
	}
	return false
}

// loginFed is `echo "$TOKEN" | helm registry login HOST -u U
// --password-stdin` (or helm repo add): the password is what echo or
// printf '%s' prints; from anything else it is only known when the script
// runs, and login says so.
func (t *translator) loginFed(stages []*syntax.Stmt) bool {
	if len(stages) != 2 {
		return false
	}
	c, ok := stages[1].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 3 || lit(c.Args[0]) != "helm" || !slices.ContainsFunc(c.Args, func(w *syntax.Word) bool { return lit(w) == "--password-stdin" }) {
		return false
	}
	in := &input{}
	if e, ok := stages[0].Cmd.(*syntax.CallExpr); ok {
		x := t.newCmd(stages[0], e)
		a := x.args
		switch {
		case len(a) == 2 && a[0] == "echo", len(a) == 3 && a[0] == "echo" && a[1] == "-n",
			len(a) == 3 && a[0] == "printf" && (a[1] == "%s" || a[1] == `%s\n`):
			in = &input{text: a[len(a)-1], known: x.ok}
		case len(a) > 0 && a[0] != "cat" && !strings.Contains(t.text(stages[0].Cmd), "<"):
			// aws ecr get-login-password | helm registry login …: a token
			// the run makes, which login asks for as a secret variable
			in = &input{why: computedPrefix + t.text(stages[0].Cmd)}
		}
	}
	t.call(stages[1], c, in)
	return true
}

// funcRunsTool: the function runs helm or kubectl, itself or through a
// function it calls.
func (t *translator) funcRunsTool(f *function, depth int) bool {
	found := false
	syntax.Walk(f.decl.Body, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			name := lit(c.Args[0])
			if g := t.funcs[name]; isTool(name) || (g != nil && g != f && depth < 10 && t.funcRunsTool(g, depth+1)) {
				found = true
			}
		}
		return !found
	})
	return found
}

// noKind: every document of the YAML text is a mapping without a kind (a
// helm values file, not a manifest); text YAML cannot read is not so.
// kustomizeConfig: a file whose first object is kustomize's own config
// (apiVersion kustomize.config.k8s.io/…), not a Kubernetes object.
func kustomizeConfig(b []byte) bool {
	var doc struct {
		APIVersion string `yaml:"apiVersion"`
	}
	return yaml.Unmarshal(b, &doc) == nil && strings.HasPrefix(doc.APIVersion, "kustomize.config.k8s.io/")
}

func noKind(b []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	docs := 0
	for {
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return errors.Is(err, io.EOF) && docs > 0
		}
		if doc == nil {
			continue
		}
		m, ok := doc.(map[string]any)
		if !ok || m["kind"] != nil {
			return false
		}
		docs++
	}
}

// plainStage is a pipe's stage with what stands before its helm or
// kubectl taken off: sudo (said, as for a command alone) and a variable
// holding the tool's name (kubectl=kubectl; $kubectl create … | sudo
// $kubectl apply -f-: trial 46s67p's D1, "not known at import").
func (t *translator) plainStage(st *syntax.Stmt) *syntax.Stmt {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return st
	}
	args := c.Args
	sudo := false
	var said []string // sudo's own words, -u USER, VAR=value
	for len(args) > 1 && lit(args[0]) == "sudo" {
		n, _, _ := sudoRuns(litArgs(args))
		n = min(n, len(args)-1)
		for _, w := range args[:n] {
			said = append(said, t.text(w))
		}
		sudo, args = true, args[n:]
	}
	first := args[0]
	if lit(first) == "" {
		v, ok, _ := t.eval(first)
		if tool := ""; ok {
			if tool = t.paramTool(st, v, first); tool != "" {
				v = tool // cat <<EOF | ${KUBECTL} apply -f - (trial 46s69g's D2)
			}
		}
		if ok && isTool(v) {
			first = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: first.Pos(), ValueEnd: first.End(), Value: v}}}
		}
	}
	if !isTool(lit(first)) || !sudo && first == args[0] {
		return st
	}
	if sudo {
		t.saySudo(st, said, lit(first))
	}
	args = append([]*syntax.Word{first}, args[1:]...)
	return &syntax.Stmt{Position: args[0].Pos(), Cmd: &syntax.CallExpr{Assigns: c.Assigns, Args: args}, Redirs: st.Redirs, Negated: st.Negated}
}

// xargsTool is the helm or kubectl an xargs stage runs ("" for none),
// also through a variable that holds it (xargs -I {} $K delete …, K
// "kubectl -n demo": trial 46s68r's D3, the delete in no count).
func (t *translator) xargsTool(st *syntax.Stmt) string {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 || lit(c.Args[0]) != "xargs" {
		return ""
	}
	for _, w := range c.Args[1:] {
		if tool := toolName(lit(w)); tool != "" {
			return tool
		}
		if lit(w) != "" {
			continue
		}
		if fs, ok, _ := t.fields(w); ok && len(fs) > 0 && toolName(fs[0]) != "" {
			return toolName(fs[0])
		}
		if tool := toolOfParam(w); tool != "" {
			return tool
		}
	}
	return ""
}

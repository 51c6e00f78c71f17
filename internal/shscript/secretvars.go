package shscript

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
)

// refName is a ${NAME} reference, piped (${NAME | b64enc}) or not.
var refName = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\s*[|}]`)

// secretsInSecrets makes secret every variable that an inline manifest
// writes into a Secret's data or stringData (kuadrant's GOOGLE
// credentials, read from the environment): whatever lands in a Secret is
// one, whatever its name, and a secret variable has no default in the
// spec. A document khook cannot read as YAML counts as a Secret if it says
// kind: Secret, so a doubt makes a secret, never a plain value.
func secretsInSecrets(m *importer.Model) {
	for _, st := range m.Steps {
		if st.Out == nil || st.Out.Apply == nil {
			continue
		}
		for _, src := range st.Out.Apply.Manifests {
			if src.Inline == "" || !secretKind.MatchString(src.Inline) {
				continue
			}
			for _, name := range secretDataVars(src.Inline) {
				v := m.Var(name)
				if v == nil || v.Secret {
					continue
				}
				// required where the script demands it (${X:?}) or had a
				// value for it: unset, the Secret would hold "" where the
				// script fails or writes its default
				required := v.Required
				if v.Default != nil && *v.Default != "" {
					required = true
					m.Info = append(m.Info, importer.Note{Loc: v.From, What: "the default of " + name, Why: "not copied into the spec: it goes into a Secret, so it is a secret variable; give it as KHOOK_SECRET_" + name})
				}
				v.Secret, v.Required, v.Default, v.Example = true, required, nil, ""
				if v.Computed {
					// what the script computes it with stays said (trial
					// 46s69a's D7: docker inspect … at :13 never named)
					v.Description += "; it goes into a Secret's data (" + st.From.String() + ")"
				} else {
					v.Description = "goes into a Secret's data (" + st.From.String() + ")"
				}
			}
		}
	}
}

// secretDataVars are the ${NAME}s in the data and stringData of the
// Secrets among text's documents.
func secretDataVars(text string) []string {
	var names []string
	dec := yaml.NewDecoder(bytes.NewReader([]byte(text)))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil { // unreadable: every variable of the text
			for _, sub := range refName.FindAllStringSubmatch(text, -1) {
				names = append(names, sub[1])
			}
			return names
		}
		if str(doc["kind"]) != "Secret" {
			continue
		}
		for _, key := range []string{"data", "stringData"} {
			data, _ := doc[key].(map[string]any)
			for k, v := range data {
				if k == ".dockerconfigjson" && doc["type"] == "kubernetes.io/dockerconfigjson" {
					continue // its server and user are not secret (dockerConfig made its password one)
				}
				for _, sub := range refName.FindAllStringSubmatch(str(v), -1) {
					names = append(names, sub[1])
				}
			}
		}
	}
}

// valuesAreVars: every value of the Secrets among text's documents is
// khook variables alone (${DO_PAT}, what sed or envsubst put in a
// template): nothing of the file's own is a secret there.
func valuesAreVars(text string) bool {
	dec := yaml.NewDecoder(bytes.NewReader([]byte(text)))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return true
		} else if err != nil {
			return false
		}
		for _, key := range []string{"data", "stringData"} {
			data, _ := doc[key].(map[string]any)
			for _, v := range data {
				if strings.TrimSpace(varRef.ReplaceAllString(str(v), "")) != "" {
					return false
				}
			}
		}
	}
}

// literalSecrets takes each literal value out of the Secrets of the inline
// manifests (a here-document's stringData: password: hunter2): a secret
// variable per key, never its value, as --from-literal's are; a data:
// value is the variable through b64enc, the variable its plain value.
func (t *translator) literalSecrets(m *importer.Model) {
	for _, st := range m.Steps {
		if st.Out == nil || st.Out.Apply == nil {
			continue
		}
		for i, src := range st.Out.Apply.Manifests {
			if src.Inline == "" {
				continue
			}
			if text, names := t.envLiterals(src.Inline, st.From); names != nil {
				st.Out.Apply.Manifests[i].Inline = text
				m.Info = append(m.Info, importer.Note{Loc: st.From, What: "step " + st.Out.Name, Why: "the literal values of its env " + strings.Join(names, ", ") + " are secret variables of those names, not copied into the spec: give them as KHOOK_SECRET_…"})
			}
			if !secretKind.MatchString(st.Out.Apply.Manifests[i].Inline) {
				continue
			}
			if text, ok := t.unliteral(st.Out.Apply.Manifests[i].Inline, st.From); ok {
				st.Out.Apply.Manifests[i].Inline = text
				m.Info = append(m.Info, importer.Note{Loc: st.From, What: "step " + st.Out.Name, Why: "the literal values of its Secret are secret variables, not copied into the spec: give them as KHOOK_SECRET_…"})
			}
		}
	}
}

// envLiterals is text with each env item of a secret-looking name and a
// literal value ({name: INIT_ADMIN_API_TOKENS, value: "…"}) made a secret
// variable of that name, as a helm value's env item and a --from-literal
// credential are (trial 46s69b's D7: a heredoc Deployment's tokens
// copied into the spec); the names changed, nil when none is.
func (t *translator) envLiterals(text string, at importer.Loc) (string, []string) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var docs []*yaml.Node
	var names []string
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil
		}
		docs = append(docs, &doc)
		t.envIn(&doc, at, &names)
	}
	if names == nil {
		return "", nil
	}
	out, ok := encodeDocs(docs)
	if !ok {
		return "", nil
	}
	return out, names
}

// envIn is envLiterals over the node n and all under it.
func (t *translator) envIn(n *yaml.Node, at importer.Loc, names *[]string) {
	if n.Kind == yaml.MappingNode {
		name, v := valueOf(n, "name"), valueOf(n, "value")
		if k := scalar(name); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" && secretLooking(k) && !refName.MatchString(v.Value) && !importer.NoCredential(k, v.Value, nil) {
			vn := varName(k)
			t.secretVar(v.Value, vn)
			t.ref(&importer.Var{Name: vn, Secret: true, Required: true, From: at, Description: "the value of env " + k + " in the script's manifest (a literal of the script, not copied)"})
			v.Value, v.Tag, v.Style = "${"+vn+"}", "!!str", yaml.DoubleQuotedStyle
			*names = append(*names, k)
		}
	}
	for _, c := range n.Content {
		t.envIn(c, at, names)
	}
}

// unliteral is text with its Secrets' literal values made secret
// variables; false when it has none or is not YAML khook can rewrite.
func (t *translator) unliteral(text string, at importer.Loc) (string, bool) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var docs []*yaml.Node
	changed := false
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
			return "", false
		}
		docs = append(docs, &doc)
		root := doc.Content[0]
		if scalar(valueOf(root, "kind")) != "Secret" {
			continue
		}
		name := "SECRET"
		if md := valueOf(root, "metadata"); md != nil {
			name = scalar(valueOf(md, "name"))
		}
		for _, key := range []string{"stringData", "data"} {
			data := valueOf(root, key)
			if data == nil || data.Kind != yaml.MappingNode {
				continue
			}
			for j := 0; j+1 < len(data.Content); j += 2 {
				k, v := data.Content[j], data.Content[j+1]
				if v.Kind != yaml.ScalarNode || v.Value == "" || refName.MatchString(v.Value) {
					continue // empty, or a variable's already
				}
				plain := v.Value
				if key == "data" {
					b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v.Value))
					if err != nil {
						continue
					}
					t.secret(v.Value)
					plain = string(b)
				}
				vn := varName(name + "_" + k.Value)
				t.secretVar(plain, vn)
				t.ref(&importer.Var{Name: vn, Secret: true, Required: true, From: at, Description: "key " + k.Value + " of Secret " + name + " (a literal of the script, not copied)"})
				ref := "${" + vn + "}"
				if key == "data" {
					ref = "${" + vn + " | b64enc}"
				}
				v.Value, v.Tag, v.Style = ref, "!!str", yaml.DoubleQuotedStyle
				changed = true
			}
		}
	}
	if !changed {
		return "", false
	}
	return encodeDocs(docs)
}

// encodeDocs is the YAML documents written back, false where one cannot be.
func encodeDocs(docs []*yaml.Node) (string, bool) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return "", false
		}
	}
	_ = enc.Close()
	return b.String(), true
}

// valueOf is a mapping node's value under key, nil when absent.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalar is a node's text, "" for none.
func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

// echoedSecrets writes a reference to the secret variable wherever a
// helm value is the very literal the variable was made of, said at the
// step's line: mongodb's auth.username=testGaloy beside
// auth.password=testGaloy wrote the password in clear while the header
// said it was not copied, and stderr masked both (trial 46s68f's D4).
func (t *translator) echoedSecrets(m *importer.Model) {
	if len(t.secretVars) == 0 {
		return
	}
	for _, st := range m.Steps {
		switch {
		case st.Out == nil:
		case st.Out.Helm != nil:
			t.echoedIn(st, st.Out.Helm.Values, "")
		case st.Out.Apply != nil:
			for i, src := range st.Out.Apply.Manifests {
				st.Out.Apply.Manifests[i].Inline = t.echoedInline(st, src.Inline)
			}
		}
	}
}

// scalarLine is a YAML line `key: value` or `- value`, the value whole.
var scalarLine = regexp.MustCompile(`^(\s*(?:-\s+)?(?:[^:#\s][^:#]*:\s+|-\s+))(["']?)(.*?)(["']?)\s*$`)

// echoedInline is text with each scalar that is the very literal of a
// secret variable written as that variable (a manifest's username equal
// to the password given to helm: fixer 46s68w2's note).
func (t *translator) echoedInline(st *importer.Step, text string) string {
	if text == "" {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		m := scalarLine.FindStringSubmatch(l)
		if m == nil || m[2] != m[4] || t.secretVars[m[3]] == "" || namesObject(m[1]) {
			continue
		}
		name := t.secretVars[m[3]]
		lines[i] = m[1] + "${" + name + " | toJson}"
		t.m.Info = append(t.m.Info, importer.Note{Loc: st.From, What: "manifest key " + strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m[1]), "-")), ":"), Why: echoedWhy(name)})
	}
	return strings.Join(lines, "\n")
}

// namesObject: the key of a YAML line prefix names or places an object
// (metadata's name and namespace, a label, an image, a claim): a password
// equal to the namespace (odoo's PASSWORD: odoo) hides nothing written as
// a variable there, and breaks the object (trial regression over 46s68t's
// odoo: namespace: ${PASSWORD}, the step refused).
func namesObject(prefix string) bool {
	key := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(prefix), "-")), ":")
	switch key {
	case "name", "namespace", "kind", "apiVersion", "app", "image", "serviceName", "claimName", "secretName", "host", "component", "instance", "release", "path":
		return true
	}
	return strings.Contains(key, "/") // app.kubernetes.io/name
}

// echoedIn is echoedSecrets over one map of values under prefix.
func (t *translator) echoedIn(st *importer.Step, vals map[string]any, prefix string) {
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		switch v := vals[k].(type) {
		case map[string]any:
			t.echoedIn(st, v, prefix+k+".")
		case []any:
			for i, e := range v {
				if s, ok := e.(string); ok && t.secretVars[s] != "" {
					v[i] = "${" + t.secretVars[s] + "}"
					t.m.Info = append(t.m.Info, importer.Note{Loc: st.From, What: "values " + prefix + k + "[" + strconv.Itoa(i) + "]", Why: echoedWhy(t.secretVars[s])})
				} else if em, ok := e.(map[string]any); ok {
					t.echoedIn(st, em, prefix+k+"["+strconv.Itoa(i)+"].")
				}
			}
		case string:
			if name := t.secretVars[v]; name != "" {
				vals[k] = "${" + name + "}"
				t.m.Info = append(t.m.Info, importer.Note{Loc: st.From, What: "values " + prefix + k, Why: echoedWhy(name)})
			}
		}
	}
}

func echoedWhy(name string) string {
	return "its literal value is that of the secret variable " + name + ", so it is written as ${" + name + "}, not in clear (give another value by editing the step)"
}

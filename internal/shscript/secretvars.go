package shscript

import (
	"bytes"
	"errors"
	"io"
	"regexp"

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
				if v.Default != nil && *v.Default != "" {
					m.Info = append(m.Info, importer.Note{Loc: v.From, What: "the default of " + name, Why: "not copied into the spec: it goes into a Secret, so it is a secret variable; give it as KHOOK_SECRET_" + name})
				}
				v.Secret, v.Required, v.Default, v.Example = true, false, nil, ""
				v.Description = "goes into a Secret's data (" + st.From.String() + ")"
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

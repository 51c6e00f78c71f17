package spec

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	envVarName   = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)
	// labelName and labelValue are Kubernetes' label syntax (a key is an
	// optional DNS-subdomain prefix and '/' before the name).
	labelName  = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	labelValue = regexp.MustCompile(labelValuePattern)
	// resourceType is a kubectl resource type: pods, deploy, deployments.apps.
	resourceType = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// Helm's release name limit (it suffixes names for its own objects).
const maxReleaseName = 53

// checkLabel validates an RFC 1123 label (namespaces, step names).
func checkLabel(s string) string {
	switch {
	case len(s) > 63:
		return fmt.Sprintf("%q is longer than 63 characters", s)
	case !dnsLabel.MatchString(s):
		return fmt.Sprintf("%q is not a valid RFC 1123 label: use lowercase letters, digits and '-', starting and ending with a letter or digit", s)
	}
	return ""
}

// checkLabelKey validates a label key as Kubernetes does: [prefix/]name,
// the name at most 63 characters, the prefix a DNS subdomain.
func checkLabelKey(k string) string {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name, prefix = prefix, ""
	}
	switch {
	case hasPrefix && checkSubdomain(prefix, 253) != "":
		return fmt.Sprintf("label key %q: its prefix %s", k, checkSubdomain(prefix, 253))
	case len(name) > 63 || !labelName.MatchString(name):
		return fmt.Sprintf("label key %q is not a valid label name: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit (an optional prefix/ before it)", k)
	}
	return ""
}

// checkLabelValue validates a label value: empty, or at most 63 letters,
// digits, '-', '_' and '.', starting and ending with a letter or digit.
func checkLabelValue(k, v string) string {
	if len(v) > 63 || !labelValue.MatchString(v) {
		return fmt.Sprintf("label %s: value %q is not a valid label value: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit", k, v)
	}
	return ""
}

// checkSubdomain validates an RFC 1123 subdomain of at most max characters.
func checkSubdomain(s string, max int) string {
	switch {
	case len(s) > max:
		return fmt.Sprintf("%q is longer than %d characters", s, max)
	case !dnsSubdomain.MatchString(s):
		return fmt.Sprintf("%q is not a valid RFC 1123 name: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", s)
	}
	return ""
}

// Resource is a kubectl-style resource argument: TYPE or TYPE/NAME.
type Resource struct {
	Type string // pods, deploy, deployments.apps, daemonset
	Name string // empty for a bare type
}

func (r Resource) String() string {
	if r.Name == "" {
		return r.Type
	}
	return r.Type + "/" + r.Name
}

// ParseResource parses TYPE or TYPE/NAME; needName requires the NAME.
func ParseResource(s string, needName bool) (Resource, error) {
	typ, name, hasName := strings.Cut(s, "/")
	r := Resource{Type: typ, Name: name}
	switch {
	case s == "":
		return r, fmt.Errorf("is empty")
	case !resourceType.MatchString(strings.ToLower(typ)):
		return r, fmt.Errorf("%q: %q is not a resource type (like pods, deploy, deployments.apps)", s, typ)
	case hasName && (name == "" || strings.Contains(name, "/")):
		return r, fmt.Errorf("%q: write TYPE/NAME, like daemonset/aws-node", s)
	case hasName && checkSubdomain(name, 253) != "":
		return r, fmt.Errorf("%q: %s", s, checkSubdomain(name, 253))
	case needName && !hasName:
		return r, fmt.Errorf("%q names no object: write TYPE/NAME, like daemonset/aws-node", s)
	}
	return r, nil
}

// rolloutKinds are the workload types kubectl rollout handles, by alias.
var rolloutKinds = map[string]string{
	"deployment": "deployment", "deployments": "deployment", "deploy": "deployment", "deployments.apps": "deployment", "deployment.apps": "deployment",
	"daemonset": "daemonset", "daemonsets": "daemonset", "ds": "daemonset", "daemonsets.apps": "daemonset", "daemonset.apps": "daemonset",
	"statefulset": "statefulset", "statefulsets": "statefulset", "sts": "statefulset", "statefulsets.apps": "statefulset", "statefulset.apps": "statefulset",
}

// Object is delete.resource parsed: TYPE or TYPE/NAME, as validation
// checked it.
func (d *Delete) Object() (Resource, error) { return ParseResource(d.Resource, false) }

// Object is patch.target parsed: TYPE/NAME.
func (p *Patch) Object() (Resource, error) { return ParseResource(p.Target, true) }

// Object is wait.on parsed: TYPE or TYPE/NAME.
func (w *Wait) Object() (Resource, error) { return ParseResource(w.On, false) }

// Object is the workload of rollout.restart or rollout.status: TYPE/NAME.
func (r *Rollout) Object() (Resource, error) {
	if r.Restart != "" {
		return ParseResource(r.Restart, true)
	}
	return ParseResource(r.Status, true)
}

// Suggest returns the known name closest to s when s is a plausible typo
// of it, else "": spec's one did-you-mean, for errors outside spec too
// (step selection's --target, --exclude and --selector).
func Suggest(s string, known []string) string { return suggest(s, known) }

// StepNames lists the steps' names in spec order.
func (s *Spec) StepNames() []string { return stepNameList(s) }

package chartsource

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/strvals"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/spec"
)

// MissingRefError is a valuesFrom reference whose object does not exist:
// an earlier step may yet make it (a release that generates a
// password, read by the next), which the plan says (helmstep.Load).
type MissingRefError struct {
	Kind, Namespace, Name string
	msg                   string
}

func (e *MissingRefError) Error() string { return e.msg }

// KeyRef reads valuesFrom[i]'s secretKeyRef or configMapKeyRef (kind
// "Secret" or "ConfigMap") with the run's clients, in the release's
// namespace unless the reference names one. As Flux's valuesFrom: the key
// (default values.yaml) is a YAML map of values merged at the root, or with
// targetPath one value set at that path (helm --set syntax; a quoted value
// stays a string). Every value read from a Secret is registered with the
// redactor, leaf by leaf, before the values go anywhere.
func (l *ValuesLoader) KeyRef(ctx context.Context, i int, kind string, ref *spec.ValuesRef, releaseNS string) (map[string]any, error) {
	ns := ref.Namespace
	if ns == "" {
		ns = spec.NamespaceOrDefault(releaseNS)
	}
	key := ref.Key
	if key == "" {
		key = spec.DefaultValuesKey
	}
	what := fmt.Sprintf("valuesFrom[%d] %s %s/%s key %s", i, kind, ns, ref.Name, key)
	if l.clients == nil {
		return nil, fmt.Errorf("cannot read %s: no cluster connection", what)
	}
	var (
		data  map[string]string
		found bool
		err   error
	)
	if kind == "Secret" {
		s, gerr := l.clients.Typed.CoreV1().Secrets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		err = gerr
		if gerr == nil {
			data = map[string]string{}
			for k, v := range s.Data {
				data[k] = string(v)
			}
		}
	} else {
		cm, gerr := l.clients.Typed.CoreV1().ConfigMaps(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		err = gerr
		if gerr == nil {
			data = cm.Data
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		found = false
	case err != nil:
		return nil, l.clients.Explain(fmt.Errorf("cannot read %s: %w", what, err))
	default:
		_, found = data[key]
	}
	if !found {
		if ref.Optional {
			return map[string]any{}, nil
		}
		msg := what + " does not exist: create it, or mark the reference optional: true"
		if err == nil { // the object is there without the key: no later step adds it
			return nil, errors.New(msg)
		}
		return nil, &MissingRefError{Kind: kind, Namespace: ns, Name: ref.Name, msg: msg}
	}
	val := data[key]
	if kind == "Secret" {
		l.redactor.Found(val) // the Secret tap has, too; here whatever the client
	}
	m := map[string]any{}
	if ref.TargetPath != "" {
		set, parse := ref.TargetPath+"="+val, strvals.ParseInto
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			set, parse = ref.TargetPath+"="+val[1:len(val)-1], strvals.ParseIntoString
		}
		if err := parse(set, m); err != nil {
			return nil, fmt.Errorf("cannot set %s at targetPath %s: %s", what, ref.TargetPath, l.redactor.String(err.Error()))
		}
		return m, nil
	}
	m, err = l.parse(what, []byte(val))
	if err != nil {
		return nil, err
	}
	if kind == "Secret" {
		foundLeaves(m, l.redactor.Found)
	}
	return m, nil
}

// foundLeaves registers each scalar of a values map read from a Secret: a
// chart renders them one by one, not as the document they came in.
func foundLeaves(v any, found func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			foundLeaves(e, found)
		}
	case []any:
		for _, e := range v {
			foundLeaves(e, found)
		}
	case nil:
	default:
		found(strings.TrimSpace(fmt.Sprint(v)))
	}
}

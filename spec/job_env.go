package spec

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"regexp"
)

// EnvValue is a job's environment variable: a string (env: {MODE: fast}),
// or, in Kubernetes' EnvVar shape, {value: ...} or {valueFrom:
// {secretKeyRef | configMapKeyRef}}, so a password reaches the container
// from a Secret instead of the spec.
type EnvValue struct {
	Value     string     `json:"value,omitempty"`
	ValueFrom *EnvSource `json:"valueFrom,omitempty"`
}

// EnvSource is where a variable's value comes from.
type EnvSource struct {
	SecretKeyRef    *KeyRef `json:"secretKeyRef,omitempty"`
	ConfigMapKeyRef *KeyRef `json:"configMapKeyRef,omitempty"`
}

// KeyRef selects a key of a Secret or ConfigMap in the job's namespace.
type KeyRef struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Optional bool   `json:"optional,omitempty"`
}

// EnvFrom sets a variable for every key of a Secret or ConfigMap.
type EnvFrom struct {
	Prefix       string   `json:"prefix,omitempty"`
	SecretRef    *NameRef `json:"secretRef,omitempty"`
	ConfigMapRef *NameRef `json:"configMapRef,omitempty"`
}

// NameRef names a Secret or ConfigMap in the job's namespace.
type NameRef struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional,omitempty"`
}

// JobVolume mounts a Secret or ConfigMap into the job's container: a pod
// volume and its mount in one entry (read-only).
type JobVolume struct {
	Name      string           `json:"name"`
	MountPath string           `json:"mountPath"`
	Secret    *SecretVolume    `json:"secret,omitempty"`
	ConfigMap *ConfigMapVolume `json:"configMap,omitempty"`
}

// SecretVolume is Kubernetes' secret volume source, without items.
type SecretVolume struct {
	SecretName string `json:"secretName"`
	Optional   bool   `json:"optional,omitempty"`
}

// ConfigMapVolume is Kubernetes' configMap volume source, without items.
type ConfigMapVolume struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional,omitempty"`
}

var envValueType = reflect.TypeFor[EnvValue]()

// MarshalJSON writes a plain value as the string it was written as, so a
// spec's JSON (and the state record's digest of it) is unchanged by the
// object form's existence.
func (e EnvValue) MarshalJSON() ([]byte, error) {
	if e.ValueFrom == nil {
		return json.Marshal(e.Value)
	}
	type plain EnvValue
	return json.Marshal(plain(e))
}

// UnmarshalJSON reads either form.
func (e *EnvValue) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*e = EnvValue{Value: s}
		return nil
	}
	type plain EnvValue
	return json.Unmarshal(b, (*plain)(e))
}

// configKey is a Secret's or ConfigMap's data key.
var configKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

func (v *validator) jobSources(p string, j *Job) {
	for name, e := range j.Env {
		ep := p + ".env." + name
		if e.ValueFrom == nil {
			continue
		}
		if e.Value != "" {
			v.errorf(ep, "keep one of them", "has both value and valueFrom")
		}
		s := e.ValueFrom
		switch {
		case s.SecretKeyRef != nil && s.ConfigMapKeyRef != nil:
			v.errorf(ep+".valueFrom", "", "has both secretKeyRef and configMapKeyRef: keep one")
		case s.SecretKeyRef != nil:
			v.keyRef(ep+".valueFrom.secretKeyRef", s.SecretKeyRef)
		case s.ConfigMapKeyRef != nil:
			v.keyRef(ep+".valueFrom.configMapKeyRef", s.ConfigMapKeyRef)
		default:
			v.errorf(ep+".valueFrom", "write secretKeyRef: {name, key} or configMapKeyRef: {name, key}", "names no source")
		}
	}
	for i, ef := range j.EnvFrom {
		ep := fmt.Sprintf("%s.envFrom.%d", p, i)
		switch {
		case ef.SecretRef != nil && ef.ConfigMapRef != nil:
			v.errorf(ep, "", "has both secretRef and configMapRef: keep one")
		case ef.SecretRef != nil:
			v.objectName(ep+".secretRef.name", ef.SecretRef.Name)
		case ef.ConfigMapRef != nil:
			v.objectName(ep+".configMapRef.name", ef.ConfigMapRef.Name)
		default:
			v.errorf(ep, "write secretRef: {name} or configMapRef: {name}", "names no source")
		}
		if ef.Prefix != "" && !envVarName.MatchString(ef.Prefix) {
			v.errorf(ep+".prefix", "", "%q is not a valid environment variable prefix", ef.Prefix)
		}
	}
	names, mounts := map[string]bool{}, map[string]bool{}
	for i, vol := range j.Volumes {
		vp := fmt.Sprintf("%s.volumes.%d", p, i)
		if v.required(vp+".name", vol.Name, "") {
			if msg := checkLabel(vol.Name); msg != "" {
				v.errorf(vp+".name", "", "%s", msg)
			} else if names[vol.Name] {
				v.errorf(vp+".name", "", "volume %q is declared twice", vol.Name)
			}
			names[vol.Name] = true
		}
		if v.required(vp+".mountPath", vol.MountPath, "an absolute path in the container, e.g. /etc/creds") {
			switch {
			case !path.IsAbs(vol.MountPath):
				v.errorf(vp+".mountPath", "", "%q is not an absolute path", vol.MountPath)
			case mounts[path.Clean(vol.MountPath)]:
				v.errorf(vp+".mountPath", "", "%q is mounted twice", vol.MountPath)
			}
			mounts[path.Clean(vol.MountPath)] = true
		}
		switch {
		case vol.Secret != nil && vol.ConfigMap != nil:
			v.errorf(vp, "", "has both secret and configMap: keep one")
		case vol.Secret != nil:
			v.objectName(vp+".secret.secretName", vol.Secret.SecretName)
		case vol.ConfigMap != nil:
			v.objectName(vp+".configMap.name", vol.ConfigMap.Name)
		default:
			v.errorf(vp, "write secret: {secretName} or configMap: {name}", "mounts nothing")
		}
	}
}

func (v *validator) keyRef(p string, r *KeyRef) {
	v.objectName(p+".name", r.Name)
	if v.required(p+".key", r.Key, "") && !configKey.MatchString(r.Key) {
		v.errorf(p+".key", "", "%q is not a valid Secret or ConfigMap key (letters, digits, -, _ and .)", r.Key)
	}
}

// objectName checks a required Secret or ConfigMap name.
func (v *validator) objectName(p, name string) {
	if v.required(p, name, "") {
		if msg := checkSubdomain(name, 253); msg != "" {
			v.errorf(p, "", "%s", msg)
		}
	}
}

// withJobSources adds env's object form, envFrom and volumes to the job
// step's schema.
func withJobSources(props obj) obj {
	name := str(subdomainPattern, "")
	keyRef := object(obj{"name": name, "key": obj{"type": "string"}, "optional": defRef("bool")}, "name", "key")
	nameRef := object(obj{"name": name, "optional": defRef("bool")}, "name")
	scalar := obj{"type": []string{"string", "number", "boolean", "null"}}
	valueFrom := merge(object(obj{"secretKeyRef": keyRef, "configMapKeyRef": keyRef}), obj{"oneOf": exactlyOne("secretKeyRef", "configMapKeyRef")})
	envObject := object(obj{"value": scalar, "valueFrom": valueFrom})
	props["env"] = desc(obj{"type": "object", "additionalProperties": obj{"anyOf": []any{scalar, envObject}}},
		"Environment variables: NAME: value, or NAME: {valueFrom: {secretKeyRef: {name, key}}} (or configMapKeyRef)")
	props["envFrom"] = desc(obj{"type": "array", "items": merge(object(obj{
		"prefix": obj{"type": "string"}, "secretRef": nameRef, "configMapRef": nameRef,
	}), obj{"oneOf": exactlyOne("secretRef", "configMapRef")})}, "Every key of a Secret or ConfigMap as a variable")
	props["volumes"] = desc(obj{"type": "array", "items": merge(object(obj{
		"name":      str(labelPattern, "Volume name (RFC 1123 label)"),
		"mountPath": obj{"type": "string", "description": "Absolute path in the container (mounted read-only)"},
		"secret":    object(obj{"secretName": name, "optional": defRef("bool")}, "secretName"),
		"configMap": object(obj{"name": name, "optional": defRef("bool")}, "name"),
	}, "name", "mountPath"), obj{"oneOf": exactlyOne("secret", "configMap")})}, "Secrets and ConfigMaps mounted into the container")
	return props
}

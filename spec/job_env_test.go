package spec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadJob(t *testing.T, extra string) (*Job, error) {
	t.Helper()
	text := "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\nsteps:\n- name: migrate\n  job:\n    image: busybox\n" + extra
	s, err := Load(LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(text)})
	if err != nil {
		return nil, err
	}
	return s.Steps[0].Job, nil
}

func TestJobSecretSources(t *testing.T) {
	j, err := loadJob(t, `    env:
      MODE: fast
      PORT: 8080
      PASSWORD:
        valueFrom:
          secretKeyRef: {name: db, key: password}
      HOST: {valueFrom: {configMapKeyRef: {name: settings, key: db.host, optional: true}}}
    envFrom:
    - secretRef: {name: db-env}
    - {prefix: CFG_, configMapRef: {name: settings}}
    volumes:
    - {name: tls, mountPath: /etc/tls, secret: {secretName: db-tls}}
    - {name: conf, mountPath: /etc/app, configMap: {name: settings, optional: true}}
`)
	if err != nil {
		t.Fatal(err)
	}
	want := &Job{Image: "busybox", Namespace: "default",
		Env: map[string]EnvValue{"MODE": {Value: "fast"}, "PORT": {Value: "8080"},
			"PASSWORD": {ValueFrom: &EnvSource{SecretKeyRef: &KeyRef{Name: "db", Key: "password"}}},
			"HOST":     {ValueFrom: &EnvSource{ConfigMapKeyRef: &KeyRef{Name: "settings", Key: "db.host", Optional: true}}}},
		EnvFrom: []EnvFrom{{SecretRef: &NameRef{Name: "db-env"}}, {Prefix: "CFG_", ConfigMapRef: &NameRef{Name: "settings"}}},
		Volumes: []JobVolume{{Name: "tls", MountPath: "/etc/tls", Secret: &SecretVolume{SecretName: "db-tls"}},
			{Name: "conf", MountPath: "/etc/app", ConfigMap: &ConfigMapVolume{Name: "settings", Optional: true}}},
	}
	if diff := cmp.Diff(want, j); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
	// A plain value is a string in JSON, as before the object form: the
	// state record's digest of an existing job step does not change.
	b, err := json.Marshal(j.Env)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, `"MODE":"fast"`) || !strings.Contains(got, `"PASSWORD":{"valueFrom":{"secretKeyRef":{"name":"db","key":"password"}}}`) {
		t.Errorf("env as JSON: %s", got)
	}
	var back map[string]EnvValue
	if err := json.Unmarshal(b, &back); err != nil || !cmp.Equal(back, j.Env) {
		t.Errorf("env does not round-trip through JSON: %v %+v", err, back)
	}
}

// TestJobSecretSourcesValidated: every problem at once, each at its line.
func TestJobSecretSourcesValidated(t *testing.T) {
	_, err := loadJob(t, `    env:
      A: {valueFrom: {}}
      B: {valueFrom: {secretKeyRef: {name: Bad_Name, key: "a/b"}}}
      C: {valueFrom: {secretKeyRef: {name: db}}}
      D: {value: x, valueFrom: {configMapKeyRef: {name: s, key: k}}}
    envFrom:
    - prefix: "1 bad"
    - {secretRef: {name: a}, configMapRef: {name: b}}
    volumes:
    - {name: tls, mountPath: etc/tls, secret: {secretName: db-tls}}
    - {name: tls, mountPath: /etc/x}
    - {mountPath: /etc/x, configMap: {name: c}}
`)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"<stdin>:9:11: steps.0.job.env.A.valueFrom: names no source",
		`<stdin>:10:44: steps.0.job.env.B.valueFrom.secretKeyRef.name: "Bad_Name" is not a valid RFC 1123 name`,
		`steps.0.job.env.B.valueFrom.secretKeyRef.key: "a/b" is not a valid Secret or ConfigMap key`,
		"<stdin>:11:23: steps.0.job.env.C.valueFrom.secretKeyRef.key: is required",
		"steps.0.job.env.D: has both value and valueFrom",
		"<stdin>:14:7: steps.0.job.envFrom.0: names no source",
		`steps.0.job.envFrom.0.prefix: "1 bad" is not a valid environment variable prefix`,
		"steps.0.job.envFrom.1: has both secretRef and configMapRef",
		`<stdin>:17:30: steps.0.job.volumes.0.mountPath: "etc/tls" is not an absolute path`,
		`steps.0.job.volumes.1.name: volume "tls" is declared twice`,
		"steps.0.job.volumes.1: mounts nothing",
		"steps.0.job.volumes.2.name: is required",
		`steps.0.job.volumes.2.mountPath: "/etc/x" is mounted twice`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

package kube

import (
	"strings"
	"testing"
)

func TestFieldErrorNamesFieldsFromBothSpellings(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].resourcess", unknown field "spec.x"`,
		`failed to create typed patch object (ns/web; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="web"].resourcess: field not declared in schema`,
	} {
		paths := strictField.FindAllStringSubmatch(msg, -1)
		paths = append(paths, undeclaredField.FindAllStringSubmatch(msg, -1)...)
		if len(paths) == 0 || !strings.Contains(paths[0][1], "resourcess") {
			t.Errorf("no field found in %q: %v", msg, paths)
		}
	}
}

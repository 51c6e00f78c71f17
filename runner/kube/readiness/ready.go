package readiness

import (
	"fmt"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// readyConditions are the condition types that mean "ready" on kinds
// kstatus has no rules for, in the order they are looked for.
var readyConditions = []string{"Ready", "Available", "Established"}

// readyPhases are the status.phase values that mean "ready" when an object
// has none of readyConditions (Namespace Active, PersistentVolume Bound).
var readyPhases = []string{"Running", "Bound", "Active"}

// Ready reports whether an object is ready and, when it is not, why. Kinds
// kstatus knows (Deployment, StatefulSet, CRD, Job, Pod, ConfigMap, ...) are
// ready when kstatus computes Current. For other kinds: a condition of type
// Ready, Available or Established decides; else status.phase Running, Bound
// or Active; else an object with no status at all is ready (nothing reports
// progress on it). Anything else falls back to kstatus's generic rules
// (observedGeneration, Reconciling and Stalled conditions).
func Ready(obj *unstructured.Unstructured) (bool, string) {
	if status.GetLegacyConditionsFn(obj) != nil {
		return kstatusReady(obj)
	}
	st, found, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil || !found || len(st) == 0 {
		return true, ""
	}
	if og, ok := asInt64(st["observedGeneration"]); ok && og < obj.GetGeneration() {
		return false, fmt.Sprintf("status not yet observed for generation %d", obj.GetGeneration())
	}
	if ok, why, decided := readyByCondition(st); decided {
		return ok, why
	}
	if phase, _ := st["phase"].(string); phase != "" {
		for _, p := range readyPhases {
			if strings.EqualFold(phase, p) {
				return true, ""
			}
		}
		return false, "phase " + phase
	}
	return kstatusReady(obj)
}

// readyByCondition looks for the first of readyConditions the status has.
func readyByCondition(st map[string]any) (ready bool, why string, decided bool) {
	conds, _ := st["conditions"].([]any)
	byType := map[string]map[string]any{}
	for _, raw := range conds {
		if c, ok := raw.(map[string]any); ok {
			if t, _ := c["type"].(string); t != "" {
				byType[strings.ToLower(t)] = c
			}
		}
	}
	for _, name := range readyConditions {
		c, ok := byType[strings.ToLower(name)]
		if !ok {
			continue
		}
		s, _ := c["status"].(string)
		if strings.EqualFold(s, "True") {
			return true, "", true
		}
		why = name + "=" + s
		if r, _ := c["reason"].(string); r != "" {
			why += ": " + r
		}
		return false, why, true
	}
	return false, "", false
}

// kstatusReady is kstatus's verdict: Current is ready; any other status is
// reported with kstatus's own message ("Deployment: 1 of 3 replicas ready").
func kstatusReady(obj *unstructured.Unstructured) (bool, string) {
	res, err := status.Compute(obj)
	if err != nil {
		return false, "status cannot be computed: " + err.Error()
	}
	if res.Status == status.CurrentStatus {
		return true, ""
	}
	if res.Message != "" {
		return false, res.Status.String() + ": " + res.Message
	}
	return false, res.Status.String()
}

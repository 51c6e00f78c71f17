package objdiff

import (
	"encoding/base64"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NormalizeSecret returns obj with a core Secret's stringData folded into
// data (base64, stringData winning over data on a shared key, as the API
// server does) and stringData removed; any other object is returned as is.
//
// The API server never stores stringData: it moves it into data. A request
// computed from a manifest that keeps stringData therefore never matches the
// live object, and the three-way patch is never empty: every converged
// re-run would PATCH the Secret. Normalising before the request is computed
// makes the last-applied annotation hold data too, so apply compares like
// with like. A stringData khook cannot fold (not a map of strings) is left
// for the API server to reject with its own message.
func NormalizeSecret(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj.GetKind() != "Secret" || obj.GetAPIVersion() != "v1" {
		return obj
	}
	raw, found := obj.Object["stringData"]
	if !found {
		return obj
	}
	if raw == nil { // "stringData:" with no entries
		out := obj.DeepCopy()
		delete(out.Object, "stringData")
		return out
	}
	strs, ok := raw.(map[string]any)
	if !ok {
		return obj
	}
	for _, v := range strs {
		if _, ok := v.(string); !ok {
			return obj
		}
	}
	data := map[string]any{}
	switch d := obj.Object["data"].(type) {
	case map[string]any:
		for k, v := range d {
			data[k] = v
		}
	case nil:
	default:
		return obj // a malformed data: the API server says what is wrong
	}
	for k, v := range strs {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
	}
	out := obj.DeepCopy()
	delete(out.Object, "stringData")
	if len(data) > 0 {
		out.Object["data"] = data
	}
	return out
}

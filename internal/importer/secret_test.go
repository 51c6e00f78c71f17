package importer

import "testing"

// A KEY that is a kind of key, not a credential, makes no secret (trial
// 46n's D1: AWS_DEPLOYMENT_TAG_KEY holds an EBS tag's name).
func TestSecretLookingKeyKinds(t *testing.T) {
	for name, want := range map[string]bool{
		"AWS_DEPLOYMENT_TAG_KEY": false, "LABEL_KEY": false, "annotationKey": false, "PARTITION_KEY": false,
		"SORT_KEY": false, "HASH_KEY": false, "ROUTING_KEY": false, "CACHE_KEY": false, "PRIMARY_KEY": false,
		"topology_key": false,
		"API_KEY":      true, "AWS_SECRET_ACCESS_KEY": true, "SSH_KEY": true, "TAG_KEY_SECRET": true, "DB_PASSWORD": true,
		"KEY": true, "MASTER_KEY": true,
	} {
		if got := SecretLooking(name); got != want {
			t.Errorf("SecretLooking(%q) = %v, want %v", name, got, want)
		}
	}
}

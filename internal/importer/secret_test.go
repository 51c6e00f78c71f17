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
		"KEY": true, "MASTER_KEY": true, "ZITADEL_MASTERKEY": true, "ADMINPASSWORD": true, "GITHUB_AUTHTOKEN": true,
		"MONKEY_BUSINESS": false, "ZITADEL_MASTERKEY_FILE": false,
		"TFE_LICENSE": true, "REPLICATED_LICENSE_ID": true, "LICENSE": true, "ACCEPT_LICENSE": false, "LICENSE_TYPE": false,
		"LICENSE_FILE": false, "DEFAULT_CONFIG_KEY": false,
	} {
		if got := SecretLooking(name); got != want {
			t.Errorf("SecretLooking(%q) = %v, want %v", name, got, want)
		}
	}
}

// One rule for a credential's key, for both importers (trial 46n's S1).
func TestSecretKey(t *testing.T) {
	for k, want := range map[string]bool{
		"auth.password": true, "rootPassword": true, "db_pass": true, "passwd": true, "apiToken": true, "token": true,
		"apiKey": true, "api-key": true, "APIKey": true, "secretKey": true, "aws.secretAccessKey": true, "accessKey": true,
		"privateKey": true, "credentials": true, "oidc.clientSecret": true, "docker-password": true,
		"existingSecret": false, "passwordSecretName": false, "tokenRef": false, "existingSecretPasswordKey": false,
		"adminPasswordKey": false, "accessKeyId": false, "tokenTTL": false, "key": false, "tolerations.0.key": false,
		"secret": false, "passwordLength": false, "password-stdin": false, "username": false,
		"masterkey": true, "zitadel.masterkey": true,
	} {
		if got := SecretKey(k); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// A URL's password is a credential whatever the URL is named (trial 46n's D3).
func TestURLCredentials(t *testing.T) {
	for s, want := range map[string]bool{
		"amqp://app:pass@broker:5672": true, "https://u:p@host/x": true, "postgres://app:${DB_PASSWORD}@db/app": false,
		"https://token@github.com": false, "https://host/a:b@c": false, "oci://ref[:tag|@digest]": false, "user:pass@host": false,
	} {
		if got := URLCredentials(s); got != want {
			t.Errorf("URLCredentials(%q) = %v, want %v", s, got, want)
		}
	}
}

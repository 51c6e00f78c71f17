package importer

import "strings"

// secretWords are the parts of a variable or key name that make its value
// a secret (TOKEN, DB_PASSWORD, api-key, ...).
var secretWords = map[string]bool{"TOKEN": true, "PASSWORD": true, "PASSWD": true, "PASS": true, "SECRET": true,
	"KEY": true, "APIKEY": true, "CREDENTIALS": true, "CREDS": true, "PRIVATE": true, "PAT": true}

// namesSomething are last words of a name whose value says where a secret
// is, not what it is: REGISTRY_SECRET_NAME, PRIVATE_REGISTRY, KEY_PATH.
var namesSomething = map[string]bool{"NAME": true, "NAMESPACE": true, "NS": true, "REF": true,
	"REGISTRY": true, "SERVER": true, "HOST": true, "URL": true, "ENDPOINT": true,
	"PATH": true, "FILE": true, "DIR": true}

// keyKinds are words before KEY that make it a kind of key that is no
// credential: the name of a tag or label (AWS_DEPLOYMENT_TAG_KEY), a
// database's or a queue's key, a cache key (trial 46n's D1).
var keyKinds = map[string]bool{"TAG": true, "LABEL": true, "ANNOTATION": true, "PARTITION": true, "SORT": true,
	"HASH": true, "ROUTING": true, "CACHE": true, "PRIMARY": true, "FOREIGN": true, "SHARD": true, "INDEX": true,
	"TOPOLOGY": true, "LOOKUP": true, "GROUP": true, "SELECTOR": true, "DEDUP": true, "DEDUPLICATION": true,
	"IDEMPOTENCY": true, "RANGE": true, "CLUSTERING": true, "COMPOSITE": true, "UNIQUE": true, "MAP": true}

// SecretLooking tells a name (a variable, a key, a file name) whose value
// is a secret: both importers declare such a value a secret: true
// variable and never write it.
func SecretLooking(name string) bool {
	up := strings.ToUpper(name)
	parts := strings.FieldsFunc(up, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') })
	if len(parts) > 1 && namesSomething[parts[len(parts)-1]] {
		return false
	}
	for i, part := range parts {
		if part == "KEY" && i > 0 && keyKinds[parts[i-1]] {
			continue
		}
		if secretWords[part] {
			return true
		}
	}
	return false
}

package importer

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// secretWords are the parts of a variable or key name that make its value
// a secret (TOKEN, DB_PASSWORD, ADMIN_PW, api-key, ...).
var secretWords = map[string]bool{"TOKEN": true, "PASSWORD": true, "PASSWD": true, "PASS": true, "PW": true, "SECRET": true,
	"KEY": true, "APIKEY": true, "CREDENTIALS": true, "CREDS": true, "PRIVATE": true, "PAT": true,
	"TOKENS": true, "PASSWORDS": true} // a list of them: Unleash's INIT_ADMIN_API_TOKENS (trial 46s69b's D7)

// namesSomething are last words of a name whose value says where a secret
// is, not what it is: REGISTRY_SECRET_NAME, PRIVATE_REGISTRY, KEY_PATH,
// OIDC_TOKEN_URI (an endpoint: trial 46p, civitas's env list).
var namesSomething = map[string]bool{"NAME": true, "NAMESPACE": true, "NS": true, "REF": true,
	"REGISTRY": true, "SERVER": true, "HOST": true, "URL": true, "URI": true, "ENDPOINT": true,
	"PATH": true, "FILE": true, "DIR": true}

// keyKinds are words before KEY that make it a kind of key that is no
// credential: the name of a tag or label (AWS_DEPLOYMENT_TAG_KEY), a
// database's or a queue's key, a cache key (trial 46n's D1).
var keyKinds = map[string]bool{"TAG": true, "LABEL": true, "ANNOTATION": true, "PARTITION": true, "SORT": true,
	"HASH": true, "ROUTING": true, "CACHE": true, "PRIMARY": true, "FOREIGN": true, "SHARD": true, "INDEX": true,
	"TOPOLOGY": true, "LOOKUP": true, "GROUP": true, "SELECTOR": true, "DEDUP": true, "DEDUPLICATION": true,
	"IDEMPOTENCY": true, "RANGE": true, "CLUSTERING": true, "COMPOSITE": true, "UNIQUE": true, "MAP": true,
	"CONFIG": true} // DEFAULT_CONFIG_KEY: a ConfigMap key's name (trial 46zc's D9)

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
		if secretWords[part] || endsRunTogether(strings.ToLower(part)) || license(parts, i) {
			return true
		}
	}
	return false
}

// license: a product licence (TFE_LICENSE, REPLICATED_LICENSE_ID, trial
// 46zc's D3), which is a credential; not a licence's acceptance
// (ACCEPT_LICENSE=y) nor a word before another (LICENSE_TYPE).
func license(parts []string, i int) bool {
	if parts[i] != "LICENSE" && parts[i] != "LICENCE" {
		return false
	}
	if i > 0 && (parts[i-1] == "ACCEPT" || parts[i-1] == "AGREE" || parts[i-1] == "EULA") {
		return false
	}
	return i == len(parts)-1 || parts[i+1] == "ID"
}

// endsRunTogether: a word that ends with a credential word written run
// together (MASTERKEY, ADMINPASSWORD: trial 46z's D3, ZITADEL_MASTERKEY).
func endsRunTogether(word string) bool {
	return slices.ContainsFunc(runTogether, func(w string) bool { return strings.HasSuffix(word, w) })
}

// credentialWords are the last words of a values key (or a flag) whose
// literal value is a credential: password, dbPass, apiToken, credentials.
var credentialWords = map[string]bool{"password": true, "passwd": true, "pass": true, "pw": true, "token": true, "credential": true,
	"credentials": true, "apikey": true, "secretkey": true, "accesskey": true, "privatekey": true, "clientsecret": true}

// keyOfCredential are the words before "key" or "secret" that make a
// credential of it: apiKey, secretKey, accessKey, privateKey, clientSecret,
// jwtSecret, sessionSecret, webhookSecret (trial 46t's D4).
var keyOfCredential = map[[2]string]bool{{"api", "key"}: true, {"secret", "key"}: true, {"access", "key"}: true, {"private", "key"}: true,
	{"client", "secret"}: true, {"jwt", "secret"}: true, {"session", "secret"}: true, {"cookie", "secret"}: true, {"webhook", "secret"}: true,
	{"hmac", "secret"}: true, {"signing", "secret"}: true, {"encryption", "secret"}: true, {"shared", "secret"}: true, {"oauth", "secret"}: true,
	{"app", "secret"}: true, {"api", "secret"}: true, {"token", "secret"}: true,
	{"license", "key"}: true, {"licence", "key"}: true} // Gloo's --set license_key= (trial 46s69o's N1)

// runTogether are credential words a key written in one lower-case word
// ends with (superadminpassword, csrftoken: trial 46t's D3).
var runTogether = []string{"password", "passwd", "token", "apikey", "secretkey", "privatekey", "clientsecret", "jwtsecret",
	"masterkey", "accesskey", "encryptionkey", "signingkey"}

// SecretKey says whether a values key (its last element: auth.password),
// or a flag's name (docker-password), holds a credential: its last word is
// one (password, passwd, token, credential, apiKey, secretKey, accessKey,
// privateKey, clientSecret). Not a key that names where a secret is or
// something about it (existingSecret, passwordSecretName, tokenRef,
// passwordKey, accessKeyId, tokenTTL), nor a plain "key"
// (tolerations[0].key). One rule for both importers: the script's
// --set adminPassword=… and a helmfile's values.
func SecretKey(k string) bool {
	w := keyWords(k[strings.LastIndex(k, ".")+1:])
	if len(w) == 0 || slices.Contains(w, "existing") {
		return false
	}
	last := w[len(w)-1]
	if credentialWords[last] {
		return true
	}
	if len(w) == 1 && endsRunTogether(last) {
		return true
	}
	return len(w) > 1 && keyOfCredential[[2]string{w[len(w)-2], last}]
}

// PrivateKey says whether a file's text holds a private key (-----BEGIN
// RSA PRIVATE KEY-----, OPENSSH, EC, PKCS#8): both importers never copy
// such a file's content.
func PrivateKey(text string) bool { return strings.Contains(text, "PRIVATE KEY-----") }

// NamesItself says whether a credential's value is only the name of
// one (password: password, token: adminToken): a placeholder, which
// masked would garble every note that says "password". A value with a
// digit in it (c4nary-nexus-pw) is none.
func NamesItself(value string) bool {
	return SecretKey(value) && !strings.ContainsAny(value, "0123456789")
}

// CamelWords splits a camelCase key into words (pullSecret → pull_Secret,
// erlangCookie → erlang_Cookie) for SecretLooking and variable names,
// which split on what is not a letter or digit.
func CamelWords(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// keyWords splits a key into lower-case words: camelCase, snake_case,
// kebab-case (adminPasswordKey → admin, password, key; APIKey → api, key).
func keyWords(k string) []string {
	var words []string
	for _, part := range strings.FieldsFunc(k, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		rs := []rune(part)
		start := 0
		for i := 1; i < len(rs); i++ {
			lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
			acronymEnd := i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
			if lowerToUpper || acronymEnd {
				words = append(words, strings.ToLower(string(rs[start:i])))
				start = i
			}
		}
		words = append(words, strings.ToLower(string(rs[start:])))
	}
	return words
}

// urlPassword is a URL whose userinfo holds a password (scheme://user:password@host).
// The userinfo holds only what RFC 3986 allows there, so prose such as
// oci://ref[:tag|@digest] is none.
var urlPassword = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[a-zA-Z0-9\-._~%!$&'()*+,;=]*:([a-zA-Z0-9\-._~%!$&'()*+,;=:{}]+)@`)

// URLCredentials says whether s holds a URL with a password in it
// (amqp://app:pass@broker, https://u:p@host), whatever it is named: the
// password is a secret. A reference standing for it is none: ${NAME},
// $(cmd), a shell's $PGPASSWORD (an init container's command: trial 46w's
// D4), {{ .Values.x }}.
func URLCredentials(s string) bool {
	for _, m := range urlPassword.FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[1], "$") && !strings.HasPrefix(m[1], "{{") { // ${NAME}, $(cmd), a shell's $PGPASSWORD
			return true
		}
	}
	return false
}

// NoCredential says whether value, a literal under key (one SecretKey
// takes for a credential's), is none after all (trial 46p's D2): a
// boolean (plainTextPassword: 'false'), etcd's cluster id
// (initialClusterToken), or the name of a key of a Secret — a short
// identifier under a *SecretKey key that is one by its shape (tls.crt,
// password), by a key beside it naming a Secret (siblings: secretName),
// or by its key (adminKeySecretKey: which key of the Secret holds the
// admin key). awsSecretKey: … or a bare secretKey: with another value is
// a credential still. One rule for both importers.
func NoCredential(key, value string, siblings []string) bool {
	if _, err := strconv.ParseBool(strings.ToLower(value)); err == nil {
		return true
	}
	lk := strings.ToLower(key[strings.LastIndex(key, ".")+1:])
	if strings.HasSuffix(lk, "initialclustertoken") {
		return true
	}
	if !strings.HasSuffix(lk, "secretkey") || !keyNameShape.MatchString(value) {
		return false
	}
	if strings.Contains(value, ".") || wellKnownKeys[strings.ToLower(value)] {
		return true
	}
	for _, k := range siblings {
		if l := strings.ToLower(k); strings.HasSuffix(l, "secretname") || l == "secretref" || l == "existingsecret" {
			return true
		}
	}
	of := strings.TrimSuffix(lk, "secretkey")
	for _, w := range []string{"key", "password", "token", "credentials", "cert", "user", "username"} {
		if strings.HasSuffix(of, w) {
			return true
		}
	}
	return false
}

// keyNameShape is a short identifier, as a key of a Secret is named
// (password, tls.crt, admin-token).
var keyNameShape = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}(\.[A-Za-z0-9_-]{1,31})*$`)

// wellKnownKeys are keys of a Secret charts read a credential from.
var wellKnownKeys = map[string]bool{"password": true, "token": true, "secret": true, "username": true, "user": true,
	"key": true, "admin": true, "apikey": true, "api-key": true, "api_key": true, "secret-key": true, "secretkey": true,
	"access-key": true, "accesskey": true, "credentials": true, "client-secret": true, "client_secret": true}

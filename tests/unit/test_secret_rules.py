"""The default secret rules (redaction/_secretrules.py): every plugin detect-secrets ships is
used, covered by our rules or left out with a reason; what each plugin's regexes find in
samples is masked; our rules mask their kinds wherever the text stands (a JSON line, JSON
text inside a string, behind escapes) and leave ordinary values alone; JSON text is masked
in place, every byte outside a secret kept.

The samples are made up here (no real credential), each in the shape its plugin looks for.
"""

from __future__ import annotations

import importlib
import json

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.keyword import KeywordDetector

from dshreplay.redaction._secretrules import COVERED, LEFT_OUT, OURS, PLUGIN_GROUPS, PLUGINS, default_rules
from dshreplay.redaction.redactor import MASK, load_redactor

REDACTOR = load_redactor(None)
HEX64 = "d85126b368f25083f6cb3517c166fc1de87738255a10f581f0806e7ed4ba80c3"
ALNUM = "2HfthIlSrv2eeuEptW9yH0zmQ8HBLgWoEVGK"  # 36 letters and digits
PEM_BODY = "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn\nKQIDAQABAoIBAGnQ8Hc2vCzWxYz"

# samples in which each regex of each plugin finds a secret (keyed by plugin, then regex number)
PLUGIN_SAMPLES = {
    "ArtifactoryDetector": {0: ["artifactory key AKCp8k7qE2jT4mN6bV9x here"], 1: ['"password": "AP6xK9mQ2wE5rT8"']},
    "AWSKeyDetector": {0: ["export AWS_ACCESS_KEY_ID=AKIAQ3EGUXDVB7JNS4TQ"],
                       1: ['aws_secret_access_key = "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"']},
    "AzureStorageKeyDetector": {0: ["DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=RfD5XPsKdiGoW3GChn1"
                                    "YXOHpqhXynSjiX3GrE1gk0yXnvyDm32LL4tM3zHZezAM6YVDwsWqtY4EIRZMGY0PS6F==;"]},
    "BasicAuthDetector": {0: ["git clone https://deploy:Pa55w0rdBasic@git.example.com/repo.git"]},
    "CloudantDetector": {0: [f'cloudant_password = "{HEX64}"'], 1: ["cloudant_apikey: qmcvkgmevsonurbmvozvolgj"],
                         2: [f"https://acct:{HEX64}@acct.cloudant.com"],
                         3: ["https://acct:qmcvkgmevsonurbmvozvolgj@acct.cloudant.com"]},
    "DiscordBotTokenDetector": {0: ["MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWsX"]},
    "GitHubTokenDetector": {0: [f"GH_TOKEN=ghp_{ALNUM}", f"gho_{ALNUM}"]},
    "GitLabTokenDetector": {0: ["glpat-Vx4XR0ERvW9UySajvLwz"], 1: ["GR1348941Vx4XR0ERvW9UySajvLwz"],
                            2: ["glcbt-1a_Vx4XR0ERvW9UySajvLwz"], 3: ["glimt-LNWNDhQDXFBFwuamwvgrIkyzI"],
                            4: ["glptt-gElgH3iTC3ZVM9FvC3Ft0yMihLigusOGkKSSLRcV"],
                            5: ["glagent-M-UeWe3Lv7_55Lt9O-mjS4m4yz1f8v-P9nNuCsE9jxBfzs7bGw"],
                            6: [f"gloas-{HEX64}"]},
    "IbmCloudIamDetector": {0: ['ibm_cloud_iam_api_key = "WujhYhjUs--RY-zrJxYUKGwreGTZuApCOGIMIWgmo0qp"']},
    "IbmCosHmacDetector": {0: ['cos_hmac_secret_access_key = "17a907713a90a33ea55f9dcb4c977b1e8624794e18743fa5"']},
    "JwtTokenDetector": {0: ["jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
                             "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"]},
    "MailchimpDetector": {0: ["mailchimp vk4k6kgqxh4klf6q282uuoldhxea780v-us12"]},
    "NpmDetector": {0: ["//registry.npmjs.org/:_authToken=0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"]},
    "OpenAIDetector": {0: ["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"]},
    "PrivateKeyDetector": {n: [f"-----BEGIN {kind}-----\n{PEM_BODY}\n-----END {kind}-----"]
                           for n, kind in enumerate(["DSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
                                                     "PGP PRIVATE KEY BLOCK", "PRIVATE KEY", "RSA PRIVATE KEY"])}
    | {6: [f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{PEM_BODY}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"],
       7: [f"PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nPrivate-Lines: 2\n{PEM_BODY}\nPrivate-MAC: 0a1b"]},
    "PypiTokenDetector": {0: ["pypi-AgEIcHlwaS5vcmc3Md0hFriSpzMDsJU4B5x2JuD9xbkOVkOF7ZozX6eVICOYh1-jntivnK8cSY2xTJ"
                              "juB69YD"],
                          1: ["pypi-AgENdGVzdC5weXBpLm9yZw3Md0hFriSpzMDsJU4B5x2JuD9xbkOVkOF7ZozX6eVICOYh1-jntivnK8cSY2"
                              "xTJjuB69YD"]},
    "SendGridDetector": {0: ["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"]},
    "SlackDetector": {0: ["xoxb-123456789012-1234567890123-vk4k6kgqxh4klf6q282u"],
                      1: ["https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/Vx4XR0ERvW9UySajvLwz"]},
    "SoftlayerDetector": {0: ["softlayer_api_key = afhj3fn4ribkt8pmvz29lz291qnpo7rscp9pw3xhow0xiic96tgi6ozigx6qaak2"],
                          1: ["https://api.softlayer.com/soap/v3/afhj3fn4ribkt8pmvz29lz291qnpo7rscp9pw3xhow0xiic96tg"
                              "i6ozigx6qaak2"]},
    "SquareOAuthDetector": {0: ["sq0csp-gRPletsjInycZbRTogQIdG_lOP1LAC_70ReWphFoUKH"]},
    "StripeDetector": {0: ["sk_live_4eC39HqLyjWDarjtT1zdp7dc9Z8Yx7W6", "rk_live_51Hx9Qk2eZvKYlo2C8xYz3RlmNop"]},
    "TelegramBotTokenDetector": {0: ["123456789:4eudQjpFIDDnwxNt1MuO-txbfRMlHxpiuPi"]},
    "TwilioKeyDetector": {0: ["ACvk4k6kgqxh4klf6q282uuoldhxea780v"], 1: ["SKvk4k6kgqxh4klf6q282uuoldhxea780v"]},
}
# lines in which KeywordDetector finds a secret, by the file name it reads them from (its forms depend on it)
KEYWORD_SAMPLES = [
    ("app.py", 'password = "Kw0rdPyth0n"'), ("app.py", 'if "Kw0rdCompare" == db_password:'),
    ("config.yaml", "secret: Kw0rdYaml99"), ("config.yaml", "api_key: Kw0rdYamlKey"),
    ("main.go", 'apiKey := "Kw0rdGoLang1"'), ("app.js", 'const db_pass = "Kw0rdJs12345";'),
    ("Main.java", 'String private_key = "Kw0rdJava77";'), ("settings.ini", "client_key = Kw0rdIni123"),
    ("main.cpp", 'std::string secret("Kw0rdCpp999");'), ("main.m", 'NSString *passwd = @"Kw0rdObjC1";'),
    ("conf.toml", 'contraseña = "Kw0rdEsp123"'), ("app.tf", 'auth_key => "Kw0rdTerra1"'),
]


def plugin_class(name: str):
    return getattr(importlib.import_module(f"detect_secrets.plugins.{PLUGINS[name]}"), name)


def test_every_plugin_detect_secrets_ships_is_used_covered_or_left_out_with_a_reason():
    shipped = {cls.__name__ for cls in get_mapping_from_secret_type_to_class().values()}
    assert shipped == set(PLUGINS) | set(COVERED) | set(LEFT_OUT)
    assert not set(PLUGINS) & set(COVERED) and not set(PLUGINS) & set(LEFT_OUT) and not set(COVERED) & set(LEFT_OUT)
    ours = {name for name, *_ in OURS}
    assert all(set(names) <= ours for names in COVERED.values())
    assert all(len(why) > 40 for why in LEFT_OUT.values())


def test_each_plugin_regex_is_a_rule_as_it_is_or_rewritten_for_re2():
    # (regexes, rewritten) per plugin: a change of detect-secrets shows here first
    found: dict = {}
    for rule in default_rules():
        if rule.source != "dshreplay":
            regexes, rewritten = found.get(rule.source, (0, 0))
            found[rule.source] = (regexes + 1, rewritten + rule.rewritten)
    assert found == {f"detect-secrets {name}": counts for name, counts in {
        "ArtifactoryDetector": (2, 0), "AWSKeyDetector": (2, 0), "AzureStorageKeyDetector": (1, 0),
        "BasicAuthDetector": (1, 0), "CloudantDetector": (4, 2), "DiscordBotTokenDetector": (1, 0),
        "GitHubTokenDetector": (1, 0), "GitLabTokenDetector": (7, 7), "IbmCloudIamDetector": (1, 1),
        "IbmCosHmacDetector": (1, 1), "JwtTokenDetector": (1, 0), "MailchimpDetector": (1, 0), "NpmDetector": (1, 0),
        "OpenAIDetector": (1, 0), "PrivateKeyDetector": (8, 0), "PypiTokenDetector": (2, 0),
        "SendGridDetector": (1, 0), "SlackDetector": (2, 0), "SoftlayerDetector": (2, 1),
        "SquareOAuthDetector": (1, 0), "StripeDetector": (1, 0), "TelegramBotTokenDetector": (1, 0),
        "TwilioKeyDetector": (2, 0)}.items()}
    assert all(key[0] in PLUGINS and key[1] < len(plugin_class(key[0]).denylist) for key in PLUGIN_GROUPS)


def secrets_found(plugin: str, sample: str) -> dict[int, list[str]]:
    """What each regex of `plugin` finds in `sample` (Python's re, as detect-secrets runs them):
    the group the rules mask, else the whole match less the delimiters around it."""
    found: dict[int, list[str]] = {}
    for n, regex in enumerate(plugin_class(plugin).denylist):
        for match in regex.finditer(sample):
            groups = PLUGIN_GROUPS.get((plugin, n), (0,))
            found.setdefault(n, []).extend(match.group(g).strip(" \t\r\n=:\"'") for g in groups if match.group(g))
    return found


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_what_each_regex_of_each_plugin_finds_is_masked(plugin):
    samples = PLUGIN_SAMPLES[plugin]
    assert sorted(samples) == list(range(len(plugin_class(plugin).denylist)))  # a sample for every regex
    for n, texts in samples.items():
        for text in texts:
            found = secrets_found(plugin, text)
            assert found.get(n), f"regex {n} of {plugin} finds nothing in {text!r}: fix the sample"
            out = REDACTOR.string(text)
            record = {"type": "user/message", "data": {"content": [{"type": "text", "text": text}]}}
            line = json.dumps(REDACTOR.record(record, json.dumps(record).encode() + b"\n"))
            for secret in (s for secrets in found.values() for s in secrets):
                assert secret not in out and MASK in out, (plugin, text, out)
                assert json.dumps(secret)[1:-1] not in line, (plugin, text, line)


@pytest.mark.parametrize("filename,line", KEYWORD_SAMPLES)
def test_what_keyword_detector_finds_is_masked_by_the_rules_that_cover_it(filename, line):
    found = {s.secret_value for s in KeywordDetector().analyze_line(filename=filename, line=line)}
    assert found, f"KeywordDetector finds nothing in {line!r} of {filename}: fix the sample"
    out = REDACTOR.string(line)
    assert not any(secret in out for secret in found), out


# samples of our rules: the text, and the part that must go
OUR_SAMPLES = {
    "private key block": ("key: -----BEGIN EC PRIVATE KEY----- MHcCAQEEIBkg4LVWM9nuwNSk -----END EC PRIVATE KEY-----",
                          "MHcCAQEEIBkg4LVWM9nuwNSk"),
    "private key without END": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUA\nAAAEbm9uZQAA",
                                "AAAEbm9uZQAA"),
    "PuTTY key": ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\nAAAAIGx1Y2t5UHV0dHlLZXk=",
                  "AAAAIGx1Y2t5UHV0dHlLZXk="),
    "Hugging Face token": ("HF_TOKEN=hf_QwErTyUiOpAsDfGhJkLzXcVbNm12345678", "QwErTyUiOpAsDfGhJkLzXcVbNm"),
    "Anthropic key": ("sk-ant-api03-AnThR0p1cK3yAbCdEfGhIjKlMnOpQrSt-_uv", "AnThR0p1cK3yAbCdEf"),
    "sk- key": ("OPENAI_API_KEY_sk-proj-Op3nA1KeyAbCdEfGhIjKlMnOpQrSt_uvwx", "Op3nA1KeyAbCdEfGhIj"),
    "GitHub token, any length": ("TOKEN_ghp_G1uedT0kenAbCdEfGhIjKlMnOpQrSt", "G1uedT0kenAbCdEfGh"),
    "GitHub fine-grained token": ("github_pat_11ABCDEFG0_Fin3Gr41nedT0kenAbCdEfGh", "Fin3Gr41nedT0ken"),
    "GitLab token, any length": ("GL=glpat-xR7k9Qm2Vw4Zt8Ln", "xR7k9Qm2Vw4Zt8Ln"),
    "npm token anywhere": ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0"),
    "Slack token, any shape": ("xoxp-Sl4ckT0kenAbCdEfGh", "Sl4ckT0kenAbCdEfGh"),
    "Slack app token": ("xapp-1-A0123456789-1234567890123-abcdef0123456789", "abcdef0123456789"),
    "Stripe key, any length": ("sk_live_51Hx9Qk2eZvKYlo2C8xYz3RlmNopQrStUvWxYz0123456789AbCd", "0123456789AbCd"),
    "AWS secret key": ("aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                       "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    "Slack webhook, any kind": ("hooks.slack.com/workflows/T0A1B2C3D/A0A1B2C3D/123456789/Wh00kS3cr3tAbCdEfGh",
                                "Wh00kS3cr3tAbCdEfGh"),
    "SendGrid key, any length": ("SG.bTnFDxPscOdt1VThe92Os.gRPletsjInycZbRTogQIdGxlOP1LACx70ReWphFoUK",
                                 "bTnFDxPscOdt1VThe92Os", "gRPletsjInycZbRTogQIdGxlOP1LACx70ReWphFoUK"),
    "Google API key": ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6-", "SyA1b2C3d4E5f6G7h8I9"),
    "netrc password": ("machine api.example.com login deploy password Vq7Lm2Xp9Kz4Rt8W", "Vq7Lm2Xp9Kz4Rt8W"),
    "pgpass line": ("db.internal:5432:appdb:app_user:Wm3Qz8Rx5Tn1Vb7K", "Wm3Qz8Rx5Tn1Vb7K"),
    "password hash": ("admin:$apr1$Rk7vQ2mZ$Xp9Lw4Nt8Yb3Hs6Jd1Fg0/", "Xp9Lw4Nt8Yb3Hs6Jd1Fg0"),
    "npmrc auth": ("//registry.npmjs.org/:_auth=ZGVwbG95OlhwOUx3NE50OFliM0hzNkpk", "ZGVwbG95OlhwOUx3NE50OFliM0hzNkpk"),
    "JDBC user/password": ("jdbc:oracle:thin:scott/Tg5Rk9Wq2Lx7Mb3N@db.example.com:1521/ORCL", "Tg5Rk9Wq2Lx7Mb3N"),
    "Discord webhook": ("https://discord.com/api/webhooks/112233445566778899/Kp8XkM3vRz9NwY2bHs7LtC5gJ1aF6eD0uK4oP",
                        "Kp8XkM3vRz9NwY2bHs7LtC5gJ1aF6eD0uK4oP"),
    "XML secret attribute": ('<add key="ClearTextPassword" value="Nq8vX2kLp9Rz4Tw7" />', "Nq8vX2kLp9Rz4Tw7"),
    "Alibaba access key id": ("aliyun access key id: LTAI5tQp8XkM3vRz9NwY2bHs", "LTAI5tQp8XkM3vRz9NwY2bHs"),
    "Artifactory API key": ("/home/AKCp8kqP2vL9mN4zR7tY1bW6hS3jD8fG0cV5aExQp8XkM3vRz9NwY2bHs7LtC5gJ1aF6eD0uK",
                            "AKCp8kqP2vL9mN4zR7tY1bW6hS3jD8fG0cV5aExQp8XkM3vRz9NwY2bHs7LtC5gJ1aF6eD0uK"),
    "JSON web token with signature": ("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.U2lnbmF0dXJlUGFydDEyMw",
                                      "U2lnbmF0dXJlUGFydDEyMw"),
    "Azure storage key": ("Endpoint=sb://x.servicebus.windows.net/;SharedAccessKey=Sh4r3dAcc3ssK3y/+=;x=1",
                          "Sh4r3dAcc3ssK3y"),
    "Azure SAS signature": ("https://a.blob.core.windows.net/c?sv=2021-08-06&sig=S4sS1gn4tur3Value%2B%3D&se=1",
                            "S4sS1gn4tur3Value"),
    "URL password": ("redis://:R3d1sPassw0rd@cache:6379 and postgres://app:Pg/Pa55/w0rd@db/app",
                     "R3d1sPassw0rd", "Pg/Pa55/w0rd"),
    "password flag": ("wget --password=Wg3tPassw0rd https://x and tool --token T00lT0kenValue", "Wg3tPassw0rd",
                      "T00lT0kenValue"),
    "mysql -p password": ("mysqldump -u root -pMy5qlPassw0rd app > dump.sql", "My5qlPassw0rd"),
    "docker login -p": ("docker login -u bob -p D0ck3rPassw0rd registry.example.com", "D0ck3rPassw0rd"),
    "sshpass -p": ("sshpass -p Ssh9assW0rd ssh host", "Ssh9assW0rd"),
    "curl -u credentials": ("curl -s -u admin:CurlPassw0rd https://api.example.com", "CurlPassw0rd"),
    "cookie header": ("Cookie: session_id=C00k1eSess10n; theme=dark", "C00k1eSess10n"),
    "authorization header": ("Authorization: Basic YWRtaW46QmFzaWNBdXRoUHc=", "YWRtaW46QmFzaWNBdXRoUHc"),
    "bearer token": ("use Bearer Be4rerT0kenValue.xyz123 for it", "Be4rerT0kenValue"),
    "password assignment": ("DB_PASSWORD=Qz9! and passphrase: \"two words\"", "Qz9!", "two words"),
    "key or token assignment": ('"private_key_id": "3f2a9c8b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a"',
                                "3f2a9c8b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a"),
    "password in code": ('if "C0mpar3dPw" == user_password:', "C0mpar3dPw"),
    "cloud service token": ("DO dop_v1_" + "4f" * 32 + " vault hvs.CAESIQ9vaultTokenAbCdEfGh12 google "
                            "ya29.a0AfH6SMBg00gleAccessT0ken", "4f4f4f4f4f4f4f4f", "CAESIQ9vaultTokenAbCd",
                            "a0AfH6SMBg00gleAccessT0ken"),
    "Sentry DSN key": ("SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o42.ingest.sentry.io/7",
                       "0123456789abcdef0123456789abcdef"),
    "redis-cli -a": ("redis-cli -h cache -p 6379 -a R3d1sCl1Pw ping", "R3d1sCl1Pw"),
    "XML secret element": ("<settings><dbPassword>Xm1Passw0rd</dbPassword></settings>", "Xm1Passw0rd"),
    "connection string password": ("Server=db;Database=app;User Id=sa;Pwd=Ad0 Passw0rd;", "Ad0 Passw0rd"),
}


def test_every_rule_of_ours_has_a_sample():
    assert sorted(OUR_SAMPLES) == sorted(name for name, *_ in OURS)


@pytest.mark.parametrize("rule", sorted(OUR_SAMPLES))
def test_each_rule_of_ours_masks_its_kind_wherever_the_text_stands(rule):
    text, *secrets = OUR_SAMPLES[rule]
    redactor = load_redactor(None)
    redactor.counting = True
    plain = redactor.string(text)
    assert redactor.by_rule[rule] >= 1, dict(redactor.by_rule)
    as_json_text = json.dumps({"outer": json.dumps({"inner": text})})  # JSON text in JSON text in a string
    record = {"type": "user/message", "data": {"content": [{"type": "text", "text": text}], "note": as_json_text}}
    for raw in (json.dumps(record).encode() + b"\n", json.dumps(record, ensure_ascii=True).encode() + b"\n"):
        masked = json.dumps(redactor.record(record, raw))
        for secret in secrets:
            assert secret not in plain and secret not in masked, (secret, plain, masked)
            assert json.dumps(secret)[1:-1] not in masked


@pytest.mark.parametrize("text", [
    "docker run -u 1000:1000 app", "git checkout -b rk-fix", "git push origin pk-update",
    "git branch -d sk-cleanup", "git branch -d sk-cleanup-old-migrations-2024",
    "The API uses bearer authentication for every call", "token: 4096000", '"maxTokens": 8192',
    '{"maxTokens": "8192", "inputTokens": 1234, "outputTokens": 99}', 'fetch(url, {credentials: "same-origin"})',
    '{"credentials": "same-origin"}', "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    '"sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
    "open http://localhost:3000/@vite/client", "interface User { password: string; }",
    "password=$DB_PASSWORD", "mkdir -p /tmp/build && cp -p a b", "ssh://git@github.com:22/org/repo.git",
    "tokenizer: bert-base-uncased", "secrets: inherit", "the password reset flow", "key: value",
    "connect to 203.0.113.7:443", "PWD=/home/dev/project", "docker login --password-stdin < pw.txt",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E",
    "max_tokens=8192 and num_tokens: 120000", "authorization: none", "Bearer token expired",
])
def test_ordinary_values_are_kept(text):
    assert REDACTOR.string(text) == text
    record = {"type": "user/message", "data": {"content": [{"type": "text", "text": text}]}}
    assert REDACTOR.record(record, json.dumps(record).encode() + b"\n") is record


def test_json_text_is_masked_in_place_every_byte_outside_a_secret_kept():
    secret = "ghp_" + ALNUM
    text = ('{\n  "a": 1.10,\n  "a": 1e2,\n  "big": 12345678901234567890123,\n  "password": "Summer2024!",\n'
            '  "nested": "{\\"token\\": \\"t0kenInNested\\", \\"n\\": 1.0}",\n'
            f'  "list": [ "keep", "{secret}" ],\n  "esc": "caf\\u00e9 \\/ {secret}"\n}}')
    expected = text.replace("Summer2024!", MASK).replace("t0kenInNested", MASK).replace(secret, MASK)
    assert REDACTOR.string(text) == expected


def test_masked_member_names_are_written_in_place_and_numbered_apart():
    text = '{"sk-proj-Op3nA1KeyAbCdEfGhIjKlMn": 1, "sk-proj-Zyxwvutsrqponmlkjihg1": 2, "[REDACTED]#2": 3}'
    assert REDACTOR.string(text) == '{"[REDACTED]": 1, "[REDACTED]#3": 2, "[REDACTED]#2": 3}'


def test_a_keys_rule_masks_a_whole_value_in_json_text_in_place(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"keys": ["env"]}))
    redactor = load_redactor(str(rules), defaults=False)
    text = '{"env": {"A": [1, {"b": "}"}]}, "cmd":  "ls",\n "n": 1.50}'
    assert redactor.string(text) == '{"env": "[REDACTED]", "cmd":  "ls",\n "n": 1.50}'
    inside = json.dumps({"arguments": text})
    assert json.loads(redactor.string(inside)) == {"arguments": '{"env": "[REDACTED]", "cmd":  "ls",\n "n": 1.50}'}


@pytest.mark.parametrize("encoded,masked", [
    ("echo Z2hwXzJIZnRoSWxTcnYyZWV1RXB0Vzl5SDB6bVE4SEJMZ1dvRVZHSw== | base64 -d",  # a GitHub token in base64
     "echo [REDACTED] | base64 -d"),
    ("callback?next=%2Fhome&auth=password%3DUrlEnc0dedPw%21", "callback?next=%2Fhome&auth=password%3D[REDACTED]"),
    ("open url/%67hp_2HfthIlSrv2eeuEptW9yH0zmQ8HBLgWoEVGK now", "open url/[REDACTED] now"),
    ("printf '\\u0067hp_2HfthIlSrv2eeuEptW9yH0zmQ8HBLgWoEVGK'", "printf '[REDACTED]'"),
    ("echo '\\x73k_live_4eC39HqLyjWDarjtT1zdp7dc'", "echo '[REDACTED]'"),
])
def test_a_secret_behind_base64_url_encoding_or_escapes_is_masked_where_it_stands(encoded, masked):
    assert REDACTOR.string(encoded) == masked


# near misses of named kinds that came out verbatim (stop 32): each text as the redactor must write it
@pytest.mark.parametrize("text,masked", [
    # a PGP key cut before its END line, with the armor headers GnuPG writes: the headers and the body
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\nComment: backup\n\n"
     "lQOYBGRwZ1BHUHNlY3JldEtleUJvZHlMaW5lMTIz\nQXJtb3JlZEJvZHlMaW5lVHdvQWJjZA==\n=Ab12\n", "[REDACTED]\n"),
    # a key whose line breaks became spaces, cut before its END line: every word of its body
    ("key: -----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE AAAAMwAAAAtzc2gtZWQyNTUxOQAAACBv",
     "key: [REDACTED]"),
    ("echo bearer LettersOnlyBearerTokenQwErTy", "echo bearer [REDACTED]"),  # letters in mixed case: a token
    ("docker login -u bob -pD0ck3rGlu3dPw reg", "docker login -u bob -p[REDACTED] reg"),
    ("docker login -u bob -p'D0ck3rGlu3dPw' reg", "docker login -u bob -p'[REDACTED]' reg"),
    ("podman login -p P0dm4nPassw0rd reg", "podman login -p [REDACTED] reg"),
    ("helm registry login reg -u bob -p H3lmPassw0rd", "helm registry login reg -u bob -p [REDACTED]"),
    ("SG.bTnFDxPscOdt1VThe92Os.gRPletsjInycZbRTogQIdGxlOP1LACx70ReWphFoUK", "[REDACTED]"),  # 21 and 42 characters
    ("token ghp_Sh0rtT0kenAbCdEfGhIjKlMn", "token [REDACTED]"),  # cut short: 24 characters
    ("GL=glpat-Sh0rtGlT0ken12345", "GL=[REDACTED]"),
    ("https://hooks.slack.com/workflows/T0A1/A0B2/1234/W0rkfl0wS3cr3tAbCdEf",
     "https://hooks.slack.com/workflows/[REDACTED]"),
    ("hooks.slack.com/services/T0A1/B0B2/Wh00k-S3cr3tAbCdEfGhIjKl", "hooks.slack.com/services/[REDACTED]"),
    ("aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "aws configure set aws_secret_access_key [REDACTED]"),
    ("config password => 'Rub7H4shPw'", "config password => '[REDACTED]'"),
    ("MYSQL_PWD=My5qlEnvPw mysql -u root", "MYSQL_PWD=[REDACTED] mysql -u root"),
    ("az storage blob list --account-key Az5t0rageFl4gKey+/Mn0123==",
     "az storage blob list --account-key [REDACTED]"),
    ("AZURE_STORAGE_KEY=Az5t0rageEnvKey+/Mn0123==", "AZURE_STORAGE_KEY=[REDACTED]"),
    ("authorization: ApiKey Ap1K3ySch3meValue", "authorization: ApiKey [REDACTED]"),
    ("use xsk-proj-Ab-CdEfGh_IjKlMn-OpQrSt_UvWx-Yz01_2345-6789AbCd", "use x[REDACTED]"),
    # a key whose body follows its BEGIN line with no break, cut before END
    ("-----BEGIN RSA PRIVATE KEY-----MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfnKQIDAQAB", "[REDACTED]"),
    # a key written in code as strings put together, cut before END
    ('key = "-----BEGIN RSA PRIVATE KEY-----\\n" + "MIIEpAIBAAKCAQEA0Z3VS5JJ\\n" + "cds3xfnKQIDAQABAAAAA\\n"',
     'key = "[REDACTED]\\n"'),
    ('key = ("-----BEGIN EC PRIVATE KEY-----\\n"\n    "MHcCAQEEIAbCdEfGhIjKlMnOpQrStUv\\n")',
     'key = ("[REDACTED]\\n")'),
    ('password="with \\"escaped\\" quotes" next', 'password="[REDACTED]" next'),  # the whole quoted value
    ('password="C:\\dir\\" next', 'password="[REDACTED]" next'),  # (no closing quote after the escape)
    ("mysql -p'My5ql Pass' db", "mysql -p'[REDACTED]' db"),  # quoted, with a space
    ('docker login -p "D0ck Pw" reg', 'docker login -p "[REDACTED]" reg'),
])
def test_near_misses_of_named_kinds_are_masked(text, masked):
    assert REDACTOR.string(text) == masked


@pytest.mark.parametrize("text", [
    "authorization: required", "cookie: none", "Use Bearer Authentication", "BEARER AUTHENTICATION",
    "docker login -u bob registry.example.com", "docker login --password-stdin -u bob reg",
    "aws configure set region us-east-1", "git add -p src/app.py", "llm --max-tokens 4096",
    "Authorization: Token-based authentication", "Cookie: see below", "cookie: session cookie handling",
    "git checkout glrt-runner-registration",
])
def test_ordinary_values_near_the_new_forms_are_kept(text):
    assert REDACTOR.string(text) == text


def test_a_value_that_runs_over_the_next_secrets_name_does_not_hide_that_secret():
    # a path spelling a header twice (folder and file): the first credential runs on to `/authorization`
    text = "in/authorization: ApiKey Ap1K3yOne/authorization: ApiKey Ap1K3yTwo.jsonl"
    redactor = load_redactor(None)
    redactor.counting = True
    assert redactor.string(text) == "in/authorization: ApiKey [REDACTED]: ApiKey [REDACTED]"
    assert redactor.by_rule == {"authorization header": 2}
    redactor = load_redactor(None)
    redactor.counting = True
    assert redactor.string("key sk-proj-Op3nA1KeyAbCdEfGhIjKlMnOpQrSt") == "key [REDACTED]"
    assert redactor.by_rule == {"sk- key": 1}  # (found twice, at the space and at `sk`: counted once)


def test_a_quote_cut_short_whose_start_a_rule_masks_is_masked_as_the_value_it_begins():
    redactor = load_redactor(None)
    redactor.counting = True
    title = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE"
    assert redactor.value({"title": title}) == {"title": "[REDACTED]"}
    redactor.counting = False
    finding = {"code": "DSH-E005", "message": f"'{title[:46]}... is not of type 'string'", "pointer": "/title"}
    assert redactor.finding(finding) == {"code": "DSH-E005", "message": "'[REDACTED]... is not of type 'string'",
                                         "pointer": "/title"}


# -- #34: false positives kept, the same shapes with a secret masked, and only the secret's span ---------------

@pytest.mark.parametrize("text,masked", [
    ("password: Zq9!xT4vLm", "password: [REDACTED]"),
    ("password: hunter2 must be rotated", "password: [REDACTED] must be rotated"),
    ('password = "getpass"', 'password = "[REDACTED]"'),
    ("password=Passw0rd(1) and password: !Qaz2wsx", "password=[REDACTED] and password: [REDACTED]"),
    ("DB_PASSWORD=Pg5ecretValue psql -h db", "DB_PASSWORD=[REDACTED] psql -h db"),
    ("api_key = sk_settings_OPENAI_1x9", "api_key = [REDACTED]"),
    ("api_token=CiAKGjBpNDd2Nmp2", "api_token=[REDACTED]"),
    ('{"token": "ghp_' + ALNUM + '"}', '{"token": "[REDACTED]"}'),
    ('{"token": "CiAKGjBpNDd2Nmp2Zml2"}', '{"token": "[REDACTED]"}'),
    ('{"authorization": "Bearer Be4rerT0kenValue"}', '{"authorization": "[REDACTED]"}'),
    ('{"password": "pending"}', '{"password": "[REDACTED]"}'),
    ("artifactory AP6xK9mQ2wE5rT8 here", "artifactory [REDACTED] here"),
    ("ghp_" + ALNUM, MASK),
])
def test_a_secret_in_the_shape_of_a_kept_value_is_masked(text, masked):
    assert REDACTOR.string(text) == masked


def test_the_data_members_of_a_models_output_are_kept_in_records():
    record = {"type": "llm/response", "data": {"logprobs": [{"token": " the", "logprob": -0.25},
                                                            {"token": "ization", "logprob": -1.5}],
                                               "next_page_token": "CiAKGjBpNDd2Nmp2Zml2", "pageToken": "Q2lBS0dq",
                                               "authorization": "pending"}}
    raw = json.dumps(record).encode() + b"\n"
    assert REDACTOR.record(record, raw) is record
    secret = {"type": "x", "data": {"token": "ghp_" + ALNUM, "authorization": "Basic YWRtaW46cHc="}}
    assert REDACTOR.record(secret, json.dumps(secret).encode()) == {"type": "x", "data": {
        "token": MASK, "authorization": MASK}}


def rule_samples() -> list[tuple[int, str, str]]:
    """(index, rule, a text holding a secret it matches) for every default rule of detect-secrets and ours."""
    samples, seen = [], {}
    for index, rule in enumerate(default_rules()):
        if rule.source == "dshreplay":
            samples.append((index, rule.name, OUR_SAMPLES[rule.name][0]))
        elif rule.source.startswith("detect-secrets "):
            plugin = rule.source.split()[-1]
            n = seen[plugin] = seen.get(plugin, -1) + 1
            samples += [(index, f"{plugin} {n}", text) for text in PLUGIN_SAMPLES[plugin][n]]
    return samples


@pytest.mark.parametrize("index,rule,text", rule_samples())
def test_a_rule_masks_only_the_secret_never_the_words_or_spaces_around_it(index, rule, text):
    # (the Artifactory rule took the spaces around `APDUResponseParser`: `class[REDACTED]extends`)
    from dshreplay.redaction._rules import find
    for before, after in (("said ", " then"), ('k: "', '" end'), ("said\t", "\nthen")):
        data = (before + text + after).encode()
        spans: list = []
        find(REDACTOR.rules.defaults[index], data, spans, trim=True)
        assert spans, (rule, data)
        for start, end, _ in spans:
            assert len(before) <= start < end <= len(before) + len(text), (rule, data, data[start:end])
            assert data[start:start + 1] not in b" \t\n\"'" and data[end - 1:end] not in b" \t\n\"'", data[start:end]
        assert MASK in REDACTOR.string(before + text + after)

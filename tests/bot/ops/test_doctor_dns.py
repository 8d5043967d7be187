"""`flagman doctor` and the sending domain: SPF, the DKIM public key of each
configured key, DMARC -- asked of a real DNS server the test starts on 127.0.0.1 (never the
internet), each missing or wrong record answered with the exact record to publish. Also the
DKIM signatures themselves, verified as a receiver would, with the key looked up in that DNS
server."""

from __future__ import annotations

import ipaddress
import re
import secrets
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dkim as dkimpy
import dns.resolver
import nacl.encoding
import nacl.signing
import pytest

from bot import dkim
from bot.mail_out import compose as mailout
from bot.mail_out.render import RenderedMail
from bot.ops import mail_dns
from bot.ops.findings import Finding, Severity
from bot.settings import Settings, SettingsError, parse_settings
from tests.servers import DnsServer

DOMAIN = "race.test"
# A global address as the relay's (the documentation ranges are not global, and doctor rightly
# does not ask SPF about a private relay): only ever a value in the test's own DNS zone.
RELAY = ipaddress.ip_address("81.2.69.160")


@pytest.fixture(scope="module")
def dns_server() -> Iterator[DnsServer]:
    """A test that needs the DNS server fails when it cannot start (dnslib missing: ServerError)."""
    with DnsServer() as server:
        yield server


@pytest.fixture
def zone(dns_server: DnsServer) -> DnsServer:
    dns_server.clear()
    return dns_server


def ed25519_key() -> str:
    return nacl.signing.SigningKey.generate().encode(encoder=nacl.encoding.Base64Encoder).decode("ascii")


def openssl_key(tmp_path: Path, *args: str) -> str:
    path = tmp_path / f"key{len(list(tmp_path.iterdir()))}.pem"
    subprocess.run(["openssl", "genpkey", *args, "-out", str(path)], check=True, capture_output=True)
    return path.read_text()


def rsa_key(tmp_path: Path) -> str:
    return openssl_key(tmp_path, "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:2048")


def site(
    zone: DnsServer, keys: dict[str, str] | None = None, *, address: str = f"flagman@{DOMAIN}", **dkim_options: object
) -> Settings:
    keys = keys or {}
    env = {"FLAGMAN_SECRET": "a-long-enough-test-secret"}
    env.update({f"FLAGMAN_DKIM_KEY_{s.upper()}": k for s, k in keys.items()})
    return parse_settings(
        {
            "bot": {"address": address},
            "outbox": {"kind": "smtp", "host": "127.0.0.1"},
            "dkim": {"selectors": list(keys), **dkim_options},
            "dns": {"nameservers": [zone.host], "port": zone.port, "timeout": 3.0},
        },
        env=env,
        base_dir=Path("."),
        source="test",
    )


def findings(settings: Settings, relay: list[Any] | None = None) -> list[Finding]:
    lookups = mail_dns.Lookups(mail_dns.make_resolver(settings))
    out = list(mail_dns.check_spf(settings, lookups, DOMAIN, relay))
    out += mail_dns.check_dkim(settings, lookups, DOMAIN)
    out += mail_dns.check_dmarc(settings, lookups, DOMAIN)
    return out


def of(found: list[Finding], area: str) -> list[Finding]:
    return [f for f in found if f.area == area]


def publish_record(zone: DnsServer, fix: str) -> None:
    """Publish what a fix says to publish, as an operator would paste it into the zone: the
    name, then the TXT data as quoted strings (joined: RFC 7208 3.3, RFC 6376 3.6.2.2)."""
    head, _, data = fix.partition(" IN TXT ")
    zone.set_txt(head.removeprefix("publish ").rstrip("."), "".join(re.findall(r'"([^"]*)"', data)))


def test_nothing_published_gets_the_three_records_to_publish(zone: DnsServer) -> None:
    """An empty zone: SPF and DMARC missing (warnings, with the records), the DKIM key missing
    (a problem: every signature would fail), each with the exact record."""
    key = ed25519_key()
    settings = site(zone, {"fm1": key})
    found = findings(settings, [RELAY])
    [spf] = of(found, "spf")
    assert spf.severity is Severity.WARNING and spf.fix == f'publish {DOMAIN}. IN TXT "v=spf1 ip4:{RELAY} ~all"'
    [dkim_finding] = of(found, "dkim")
    public = dkim.load_key("fm1", key).public
    assert dkim_finding.severity is Severity.PROBLEM
    assert dkim_finding.fix == f'publish fm1._domainkey.{DOMAIN}. IN TXT "v=DKIM1; k=ed25519; p={public}"'
    [dmarc] = of(found, "dmarc")
    assert dmarc.severity is Severity.WARNING
    assert dmarc.fix.startswith(f'publish _dmarc.{DOMAIN}. IN TXT "v=DMARC1; p=none; rua=mailto:postmaster@{DOMAIN}"')


def test_publishing_what_the_doctor_says_makes_it_all_good(zone: DnsServer, tmp_path: Path) -> None:
    """Each fix pasted into the zone as it stands (the RSA key split into 255-character strings):
    the next run finds every record right."""
    settings = site(zone, {"fm1": ed25519_key(), "fm2": rsa_key(tmp_path)})
    for finding in findings(settings, [RELAY]):
        if finding.fix.startswith("publish "):
            publish_record(zone, finding.fix)
    again = findings(settings, [RELAY])
    assert [f for f in again if f.severity is not Severity.OK] == [], again
    assert len(of(again, "dkim")) == 2 and "RSA" not in " ".join(f.text for f in again)


def test_a_dkim_record_with_another_key_is_a_problem_with_the_right_record(zone: DnsServer) -> None:
    key = ed25519_key()
    settings = site(zone, {"fm1": key})
    zone.set_txt(f"fm1._domainkey.{DOMAIN}", f"v=DKIM1; k=ed25519; p={dkim.load_key('x', ed25519_key()).public}")
    [finding] = of(findings(settings), "dkim")
    assert finding.severity is Severity.PROBLEM and "another key" in finding.text
    assert dkim.load_key("fm1", key).public in finding.fix
    zone.set_txt(f"fm1._domainkey.{DOMAIN}", "v=DKIM1; k=ed25519; p=")
    [finding] = of(findings(settings), "dkim")
    assert "revoked" in finding.text


def test_spf_records_wrong_in_each_way_are_told_apart(zone: DnsServer) -> None:
    settings = site(zone)
    zone.set_txt(DOMAIN, "v=spf1 ip4:198.51.100.0/24 -all")
    [finding] = of(findings(settings, [RELAY]), "spf")
    assert finding.severity is Severity.PROBLEM and "fail" in finding.text
    assert finding.fix == f'name it in the record: {DOMAIN}. IN TXT "v=spf1 ip4:198.51.100.0/24 ip4:{RELAY} -all"'
    zone.set_txt(DOMAIN, "v=spf1 +all")
    [finding] = of(findings(settings, [RELAY]), "spf")
    assert finding.severity is Severity.PROBLEM and "every server" in finding.text and '"v=spf1 ~all"' in finding.fix
    zone.set_txt(DOMAIN, "v=spf1 mx ~all", "v=spf1 a ~all")
    [finding] = of(findings(settings, [RELAY]), "spf")
    assert finding.severity is Severity.PROBLEM and "2 SPF records" in finding.text
    zone.set_txt(DOMAIN, "v=spf1 include:_spf.provider.test ~all")
    zone.set_txt("_spf.provider.test", f"v=spf1 ip4:{RELAY}/32 -all")
    [finding] = of(findings(settings, [RELAY]), "spf")
    assert finding.severity is Severity.OK and "allows the relay" in finding.text
    [finding] = of(findings(settings, []), "spf")
    assert finding.severity is Severity.OK and "not on a public address" in finding.text


def test_spf_is_evaluated_as_a_receiver_would(zone: DnsServer) -> None:
    """RFC 7208: ip4/ip6 with CIDR, a and mx with their addresses, include, redirect, the
    qualifiers, and the limit of 10 lookups (a permerror)."""
    lookups = mail_dns.Lookups(mail_dns.make_resolver(site(zone)))
    zone.add("mail.race.test", "A", "192.0.2.40")
    zone.add(DOMAIN, "MX", (10, "mail.race.test"))
    zone.add("www.race.test", "AAAA", "2001:db8::7")
    zone.set_txt(DOMAIN, "v=spf1 mx a:www.race.test/128 ip4:203.0.113.0/28 ?ip4:203.0.113.99 redirect=_r.race.test")
    zone.set_txt("_r.race.test", "v=spf1 ~all")

    def result(ip: str) -> str:
        return mail_dns.spf_result(mail_dns.Lookups(lookups.resolver), DOMAIN, ipaddress.ip_address(ip))

    assert result("192.0.2.40") == "pass"  # mx
    assert result("2001:db8::7") == "pass"  # a:, ipv6
    assert result("203.0.113.9") == "pass" and result("203.0.113.99") == "neutral"
    assert result("198.51.100.1") == "softfail"  # the redirect's ~all
    zone.set_txt("loop.race.test", "v=spf1 include:loop.race.test -all")
    with pytest.raises(mail_dns.SpfError):
        mail_dns.spf_result(lookups, "loop.race.test", ipaddress.ip_address("192.0.2.1"))
    assert mail_dns.spf_result(lookups, "none.race.test", ipaddress.ip_address("192.0.2.1")) == "none"


def test_dmarc_is_found_at_the_organisational_domain_and_a_bad_policy_is_a_problem(zone: DnsServer) -> None:
    sub = parse_settings({"bot": {"address": "flagman@games.race.test"}}, env={}, base_dir=Path("."), source="t")
    lookups = mail_dns.Lookups(mail_dns.make_resolver(site(zone)))
    zone.set_txt(f"_dmarc.{DOMAIN}", "v=DMARC1; p=quarantine")
    [finding] = list(mail_dns.check_dmarc(sub, lookups, f"games.{DOMAIN}"))
    assert finding.severity is Severity.OK and "organisational domain race.test" in finding.text
    zone.set_txt(f"_dmarc.{DOMAIN}", "v=DMARC1; p=maybe")
    [finding] = list(mail_dns.check_dmarc(sub, lookups, DOMAIN))
    assert finding.severity is Severity.PROBLEM and "p=maybe" in finding.text


def test_a_reserved_domain_is_not_asked_unless_a_resolver_is_named() -> None:
    """doctor.test, example.org ...: no public records (RFC 6761); never a question to the internet."""
    settings = parse_settings(
        {"bot": {"address": "flagman@example.org"}, "outbox": {"kind": "smtp"}}, env={}, base_dir=Path("."), source="t"
    )
    [finding] = list(mail_dns.check_sending_domain(settings))
    assert finding.severity is Severity.OK and "reserved" in finding.text
    maildir = parse_settings({"bot": {"address": "flagman@example.org"}}, env={}, base_dir=Path("."), source="t")
    assert list(mail_dns.check_sending_domain(maildir)) == [], "mail kept in a Maildir leaves nowhere"


def test_a_dns_server_that_does_not_answer_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:  # bound, never answers
        silent.bind(("127.0.0.1", 0))
        settings = parse_settings(
            {
                "bot": {"address": f"flagman@{DOMAIN}"},
                "outbox": {"kind": "smtp"},
                "dns": {"nameservers": ["127.0.0.1"], "port": silent.getsockname()[1], "timeout": 0.5},
            },
            env={},
            base_dir=tmp_path,
            source="t",
        )
        found = list(mail_dns.check_sending_domain(settings))
    assert [f.severity for f in found] == [Severity.WARNING] and "could not check" in found[0].text


# -- the signatures themselves ---------------------------------------------------------------


def dnsfunc(zone: DnsServer) -> Any:
    """dkimpy's key lookup, answered by the test's DNS server over the wire (dnspython)."""
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers, resolver.port, resolver.lifetime = [zone.host], zone.port, 3.0

    def lookup(name: bytes | str, timeout: float = 5) -> bytes | None:
        text = name.decode() if isinstance(name, bytes) else name
        try:
            answer = resolver.resolve(text.rstrip("."), "TXT")
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return None
        return b"".join(next(iter(answer)).strings)

    return lookup


def compose(settings: Settings, **extra: Any) -> bytes:
    from datetime import UTC, datetime

    return mailout.compose(
        settings,
        datetime(2026, 12, 1, 9, 0, tzinfo=UTC),
        kind="results",
        to=mailout.Recipient("kelly@players.test", "Kelly"),
        rendered=RenderedMail("[rc1] Results of Turn 1", "Hello ✓\nYour turn.\n"),
        reply_to="flagman+rc1.kelly.abcdefghijkl@race.test",
        **extra,
    )[2]


def verified(data: bytes, zone: DnsServer, index: int = 0) -> bool:
    """Whether the `index`-th DKIM signature verifies, as a receiver checks it (a mismatch, a
    missing key or a malformed signature: False)."""
    try:
        return bool(dkimpy.DKIM(data, minkey=1024).verify(idx=index, dnsfunc=dnsfunc(zone)))
    except dkimpy.DKIMException:
        return False


@pytest.mark.parametrize("kind", ["ed25519", "ed25519-pem", "rsa", "rsa-pkcs1"])
def test_every_mail_is_signed_and_verifies_as_a_receiver_would(zone: DnsServer, tmp_path: Path, kind: str) -> None:
    """Each form of key signs; the record the doctor asks for verifies the signature (dkimpy,
    the key looked up in DNS); a changed body or an added From fails."""
    makers: dict[str, Callable[[], str]] = {
        "ed25519": ed25519_key,
        "ed25519-pem": lambda: openssl_key(tmp_path, "-algorithm", "ed25519"),
        "rsa": lambda: rsa_key(tmp_path),
        "rsa-pkcs1": lambda: (
            subprocess.run(
                ["openssl", "rsa", "-traditional"], input=rsa_key(tmp_path), capture_output=True, text=True, check=True
            ).stdout
        ),
    }
    text = makers[kind]()
    settings = site(zone, {"fm1": text})
    key = dkim.load_key("fm1", text)
    zone.set_txt(f"fm1._domainkey.{DOMAIN}", key.record())
    data = compose(settings)
    assert data.startswith(b"DKIM-Signature: v=1; a=" + key.signature_algorithm)
    assert verified(data, zone)
    assert not verified(data.replace(b"Your turn.", b"Your turm."), zone)
    head, _, body = data.partition(b"\r\n\r\n")
    assert not verified(head + b"\r\nFrom: Mallory <m@evil.example>\r\n\r\n" + body, zone), "From is oversigned"


def test_two_keys_during_a_rotation_give_two_signatures_each_verifying(zone: DnsServer, tmp_path: Path) -> None:
    new, old = ed25519_key(), rsa_key(tmp_path)
    settings = site(zone, {"fm2": new, "fm1": old})
    for selector, text in (("fm2", new), ("fm1", old)):
        zone.set_txt(f"{selector}._domainkey.{DOMAIN}", dkim.load_key(selector, text).record())
    data = compose(settings)
    assert data.count(b"DKIM-Signature:") == 2
    assert verified(data, zone, 0) and verified(data, zone, 1)
    zone.set_txt(f"fm1._domainkey.{DOMAIN}")  # the old record withdrawn: the new signature still stands
    assert verified(data, zone, 0)


def test_without_keys_the_mail_is_byte_for_byte_what_it_was(zone: DnsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """DKIM is off by default, and then compose writes exactly the bytes it wrote before."""
    monkeypatch.setattr(secrets, "token_hex", lambda n: "0" * 16)  # the module compose draws its tokens from
    unsigned = compose(site(zone))
    plain = parse_settings(
        {"bot": {"address": f"flagman@{DOMAIN}"}}, env={"FLAGMAN_SECRET": "x"}, base_dir=Path("."), source="t"
    )
    assert unsigned == compose(plain) and b"DKIM-Signature" not in unsigned
    signed = compose(site(zone, {"fm1": ed25519_key()}))
    assert signed.endswith(unsigned) and signed.startswith(b"DKIM-Signature:")


def test_a_key_that_cannot_sign_is_a_configuration_error(zone: DnsServer, tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="no private key"):
        parse_settings({"dkim": {"selectors": ["fm1"]}}, env={}, base_dir=tmp_path, source="t")
    with pytest.raises(SettingsError, match="neither a PEM"):
        parse_settings(
            {"dkim": {"selectors": ["fm1"]}}, env={"FLAGMAN_DKIM_KEY_FM1": "not a key"}, base_dir=tmp_path, source="t"
        )
    with pytest.raises(SettingsError, match="one file per selector"):
        parse_settings({"dkim": {"selectors": ["a", "b"], "key_files": ["x"]}}, env={}, base_dir=tmp_path, source="t")
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "dkim-fm1").write_text(ed25519_key() + "\n")
    (tmp_path / "fm2.key").write_text(rsa_key(tmp_path))
    settings = parse_settings(
        {"dkim": {"selectors": ["fm1", "fm2"], "key_files": ["unused", "fm2.key"]}},
        env={"CREDENTIALS_DIRECTORY": str(creds)},
        base_dir=tmp_path,
        source="t",
    )
    assert [s for s, _ in settings.secrets.dkim_keys] == ["fm1", "fm2"]
    assert "PRIVATE" not in repr(settings), "keys never appear in a repr (logs)"


def test_two_spf_records_get_one_merged_record_that_is_valid_and_allows_what_both_did(zone: DnsServer) -> None:
    """The fix for two SPF records is one record (not "merge them: A | B"), with each one's
    mechanisms once and the most lenient `all`; published as it is, a receiver evaluates it
    (one record, no permerror) and it passes every address one of the two passed."""
    settings = site(zone)
    zone.add("mail.race.test", "A", "192.0.2.40")
    zone.add(DOMAIN, "MX", (10, "mail.race.test"))
    zone.set_txt("_spf.provider.test", f"v=spf1 ip4:{RELAY}/32 -all")
    zone.set_txt(DOMAIN, "v=spf1 mx -all", "v=spf1 ip4:203.0.113.0/28 redirect=_spf.provider.test")
    [finding] = of(findings(settings, [RELAY]), "spf")
    assert finding.severity is Severity.PROBLEM and "2 SPF records" in finding.text
    [record] = re.findall(r'IN TXT "([^"]*)"', finding.fix)
    assert record == "v=spf1 mx ip4:203.0.113.0/28 include:_spf.provider.test -all"
    zone.set_txt(DOMAIN, record)
    lookups = mail_dns.Lookups(mail_dns.make_resolver(settings))
    for address in ("192.0.2.40", "203.0.113.9", str(RELAY)):
        assert mail_dns.spf_result(mail_dns.Lookups(lookups.resolver), DOMAIN, ipaddress.ip_address(address)) == "pass"
    [finding] = of(findings(settings, [RELAY]), "spf")
    assert finding.severity is Severity.OK, finding


def test_a_merged_spf_record_keeps_the_most_lenient_all_and_never_plus_all() -> None:
    """Of ~all and -all the merge keeps ~all (no mail one record let through is failed); +all
    (every server on the internet) is never proposed."""
    assert mail_dns.merged_spf(["v=spf1 a -all", "v=spf1 mx ~all"]) == "v=spf1 a mx ~all"
    assert mail_dns.merged_spf(["v=spf1 a +all", "v=spf1 a ?all"]) == "v=spf1 a ?all"
    assert mail_dns.merged_spf(["v=spf1 a", "v=spf1 A +all exp=why.race.test"]) == "v=spf1 a ~all exp=why.race.test"

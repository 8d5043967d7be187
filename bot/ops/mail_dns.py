"""`flagman doctor`, the sending domain: its SPF, DKIM and DMARC records in DNS.

Mail that lands in spam, or nowhere, is what players complain about most. Receivers judge the
bot's mail by three records of the domain of its From (``[bot] address``):

* **SPF** (RFC 7208), a TXT record ``v=spf1 ...`` at the domain: which servers may send its
  mail. Exactly one; when the relay is on a public address, that address must pass
  (`spf_result`, the record evaluated as a receiver would: ip4, ip6, a, mx, include,
  redirect, exists, all; at most 10 DNS lookups, RFC 7208 4.6.4).
* **DKIM** (RFC 6376 3.6.1), for each ``[dkim]`` selector a TXT record
  ``v=DKIM1; k=...; p=...`` at ``<selector>._domainkey.<domain>``, holding the public key of
  the configured private key (bot.dkim): when it is missing or holds another key,
  every signature fails.
* **DMARC** (RFC 7489), a TXT record ``v=DMARC1; p=...`` at ``_dmarc.<domain>`` (or at the
  organisational domain above it): what receivers do with mail that fails both.

Each missing or wrong record comes with the exact record to publish. The questions go to the
system's resolver, or to ``[dns] nameservers`` (the tests' own DNS server on 127.0.0.1). A
domain reserved for documentation and tests (RFC 2606, RFC 6761: ``.test``, ``.example``,
``example.org``...) has no public records: it is checked only against a resolver named there.
Mail kept in a Maildir outbox leaves nowhere, and is not checked.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.ops.findings import Finding, ok, problem, warning

if TYPE_CHECKING:
    import dns.resolver

    from bot.settings import Settings

SPF_LOOKUP_LIMIT = 10  # RFC 7208 4.6.4
_RESERVED_SUFFIXES = (".test", ".example", ".invalid", ".localhost", ".local")
_RESERVED_DOMAINS = frozenset(
    {"localhost", "example.com", "example.net", "example.org", "test", "example", "invalid", "local"}
)


class DnsLookupError(RuntimeError):
    """DNS could not be asked (no resolver, a timeout, a server failure): not an answer."""


def reserved(domain: str) -> bool:
    """A domain that has no public DNS (RFC 2606, RFC 6761), or a name with no dot."""
    domain = domain.lower().rstrip(".")
    return (
        "." not in domain
        or domain in _RESERVED_DOMAINS
        or domain.endswith(_RESERVED_SUFFIXES)
        or any(domain.endswith("." + d) for d in ("example.com", "example.net", "example.org"))
    )


def make_resolver(settings: Settings) -> dns.resolver.Resolver:
    """The resolver the checks ask: [dns] nameservers (and port), else the system's."""
    import dns.resolver

    cfg = settings.dns
    try:
        resolver = dns.resolver.Resolver(configure=not cfg.nameservers)
    except dns.resolver.NoResolverConfiguration as exc:
        raise DnsLookupError("this machine has no DNS resolver configured (/etc/resolv.conf)") from exc
    if cfg.nameservers:
        resolver.nameservers = list(cfg.nameservers)
    resolver.port = cfg.port
    resolver.timeout = resolver.lifetime = cfg.timeout
    return resolver


@dataclass
class Lookups:
    """The DNS questions of one check, answered by `resolver`; counts SPF's lookups."""

    resolver: dns.resolver.Resolver
    count: int = 0

    def _answer(self, name: str, rtype: str) -> list[object]:
        import dns.exception
        import dns.resolver

        try:
            return list(self.resolver.resolve(name, rtype, search=False))
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return []
        except dns.resolver.NoNameservers as exc:
            raise DnsLookupError(f"no DNS server answered for {name} {rtype}") from exc
        except dns.exception.Timeout as exc:
            raise DnsLookupError(f"DNS did not answer for {name} {rtype} in time") from exc
        except dns.exception.DNSException as exc:
            raise DnsLookupError(f"DNS failed for {name} {rtype}: {exc}") from exc

    def txt(self, name: str) -> list[str]:
        """The TXT records at `name`, each with its strings joined (RFC 7208 3.3)."""
        return [b"".join(r.strings).decode("utf-8", "replace") for r in self._answer(name, "TXT")]  # type: ignore[attr-defined]

    def addresses(self, name: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
        for rtype in ("A", "AAAA"):
            found.extend(ipaddress.ip_address(r.address) for r in self._answer(name, rtype))  # type: ignore[attr-defined]
        return found

    def mx(self, name: str) -> list[str]:
        return [str(r.exchange).rstrip(".") for r in self._answer(name, "MX")]  # type: ignore[attr-defined]


# -- SPF ---------------------------------------------------------------------------------------


def spf_records(records: list[str]) -> list[str]:
    return [r for r in records if r.lower() == "v=spf1" or r.lower().startswith("v=spf1 ")]


_LENIENCY = (
    "?~-"  # the qualifiers of `all`, most lenient first (a merge keeps the most lenient; +all is never proposed)
)


def merged_spf(records: list[str]) -> str:
    """One SPF record that allows every server one of `records` allows: their mechanisms in
    order, each once (a ``redirect=`` becomes an ``include:``, which is what it does when it is
    not alone), one ``exp=`` at most, and one ``all`` at the end, the most lenient of theirs
    (``~all`` for ``+all``, which allows the whole internet)."""
    terms: list[str] = []
    seen: set[str] = set()
    alls: list[str] = []
    explanation = ""
    for record in records:
        for term in record.split()[1:]:
            name = term.lstrip("+-~?").lower()
            if name == "all":
                qualifier = term[0] if term[0] in "-~?" else "~"
                alls.append(qualifier)
                continue
            if name.startswith("redirect="):
                term = "include:" + term.split("=", 1)[1]
            elif name.startswith("exp="):
                explanation = explanation or term
                continue
            if term.lower() not in seen:
                seen.add(term.lower())
                terms.append(term)
    ending = [min(alls, key=_LENIENCY.index) + "all"] if alls else []
    return " ".join(["v=spf1", *terms, *ending, *([explanation] if explanation else [])])


class SpfError(ValueError):
    """The record cannot be evaluated (RFC 7208 permerror); the message says why."""


def _within(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
    cidr4: int,
    cidr6: int,
    target: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> bool:
    """Whether `target` is in the network of `address` with the mechanism's CIDR length."""
    if address.version != target.version:
        return False
    return target in ipaddress.ip_network(f"{address}/{cidr4 if target.version == 4 else cidr6}", strict=False)


def _cidr(value: str) -> tuple[str, int, int]:
    """``domain/24//64`` -> (domain, 24, 64); the defaults 32 and 128."""
    rest, _, six = value.partition("//")
    domain, slash, four = rest.partition("/")
    try:
        return domain, int(four) if slash else 32, int(six) if six else 128
    except ValueError as exc:
        raise SpfError(f"a CIDR length that is not a number in {value!r}") from exc


def spf_result(lookups: Lookups, domain: str, ip: ipaddress.IPv4Address | ipaddress.IPv6Address, depth: int = 0) -> str:
    """What a receiver's SPF check gives for mail from `ip` for `domain` (RFC 7208 2.6): pass,
    fail, softfail, neutral, none; SpfError for a permerror; DnsLookupError for a temperror.
    Macros (RFC 7208 7) are not expanded: a mechanism using one does not match."""
    if depth > SPF_LOOKUP_LIMIT:
        raise SpfError("include/redirect nested too deep")
    records = spf_records(lookups.txt(domain))
    if not records:
        return "none"
    if len(records) > 1:
        raise SpfError(f"{domain} has {len(records)} SPF records (RFC 7208 4.5: one at most)")
    terms = records[0].split()[1:]
    redirect = ""
    qualifiers = {"+": "pass", "-": "fail", "~": "softfail", "?": "neutral"}
    for term in terms:
        if "=" in term.split(":", 1)[0]:
            name, _, value = term.partition("=")
            if name.lower() == "redirect":
                redirect = value
            continue
        qualifier = "+"
        if term[0] in qualifiers:
            qualifier, term = term[0], term[1:]
        mechanism, _, value = term.partition(":")
        mechanism = mechanism.lower()
        if "/" in mechanism:  # "a/24", "mx/24"
            mechanism, _, cidr = mechanism.partition("/")
            value = value + "/" + cidr
        matched = False
        if mechanism == "all":
            matched = True
        elif mechanism in ("ip4", "ip6"):
            try:
                matched = ip in ipaddress.ip_network(value, strict=False)
            except ValueError as exc:
                raise SpfError(f"{term!r} is not a network") from exc
        elif mechanism in ("a", "mx"):
            lookups.count += 1
            target, four, six = _cidr(value) if value else (domain, 32, 128)
            target = target or domain
            if "%" in target:
                continue
            hosts = [target] if mechanism == "a" else lookups.mx(target)
            for host in hosts:
                if mechanism == "mx":
                    lookups.count += 1
                if any(_within(a, four, six, ip) for a in lookups.addresses(host)):
                    matched = True
                    break
        elif mechanism == "include":
            lookups.count += 1
            if not value:
                raise SpfError("include without a domain")
            if "%" not in value:
                inner = spf_result(lookups, value, ip, depth + 1)
                if inner == "none":
                    raise SpfError(f"include:{value} has no SPF record")
                matched = inner == "pass"
        elif mechanism == "exists":
            lookups.count += 1
            matched = "%" not in value and bool(value) and bool(lookups.addresses(value))
        elif mechanism == "ptr":
            lookups.count += 1  # deprecated (RFC 7208 5.5): never matches here
        else:
            raise SpfError(f"unknown mechanism {term!r}")
        if lookups.count > SPF_LOOKUP_LIMIT:
            raise SpfError(f"more than {SPF_LOOKUP_LIMIT} DNS lookups (RFC 7208 4.6.4)")
        if matched:
            return qualifiers[qualifier]
    if redirect:
        lookups.count += 1
        result = spf_result(lookups, redirect, ip, depth + 1)
        if result == "none":
            raise SpfError(f"redirect={redirect} has no SPF record")
        return result
    return "neutral"


def _relay_addresses(settings: Settings) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses of the [outbox] relay, as this machine resolves it (as the mailer does)."""
    try:
        infos = socket.getaddrinfo(settings.outbox.host, settings.outbox.port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    found = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if address not in found:
            found.append(address)
    return found


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_global


def _with_ip(record: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """`record` with the relay's address named before its last term (its ``all``)."""
    terms = record.split()
    mechanism = f"ip{address.version}:{address}"
    at = next(
        (i for i, t in enumerate(terms) if t.lstrip("+-~?").lower() == "all" or t.lower().startswith("redirect=")),
        len(terms),
    )
    return " ".join([*terms[:at], mechanism, *terms[at:]])


def check_spf(
    settings: Settings,
    lookups: Lookups,
    domain: str,
    relay_addresses: Sequence[ipaddress.IPv4Address | ipaddress.IPv6Address] | None = None,
) -> Iterator[Finding]:
    """The domain's SPF record, and whether it allows the relay's public addresses
    (`relay_addresses`: the [outbox] host's, as this machine resolves it, unless given)."""
    relay = settings.outbox.host
    found = _relay_addresses(settings) if relay_addresses is None else list(relay_addresses)
    public = [a for a in found if _public(a)]
    records = spf_records(lookups.txt(domain))
    if not records:
        mechanism = " ".join(f"ip{a.version}:{a}" for a in public) if public else "mx"
        note = (
            ""
            if public
            else (
                " (that allows the domain's MX hosts; if your mail leaves through another "
                "server, name it instead: ip4:<its address>, or include:<your provider's "
                "SPF domain>)"
            )
        )
        yield warning(
            "spf",
            f"{domain} has no SPF record: receivers cannot tell which servers may send its mail",
            f'publish {domain}. IN TXT "v=spf1 {mechanism} ~all"{note}',
        )
        return
    if len(records) > 1:
        yield problem(
            "spf",
            f"{domain} has {len(records)} SPF records: receivers treat that as an error "
            "(RFC 7208 4.5) and fail every mail: " + " | ".join(repr(r) for r in records),
            f"publish one record with what each allows, and delete the others: {domain}. IN TXT "
            f'"{merged_spf(records)}" (then run `flagman doctor` again: it checks that the relay is allowed)',
        )
        return
    record = records[0]
    if any(t.lower() in ("+all", "all") for t in record.split()[1:]):
        fixed = " ".join("~all" if t.lower() in ("+all", "all") else t for t in record.split())
        yield problem(
            "spf",
            f"the SPF record of {domain} allows every server on the internet ({record!r})",
            f'end it with ~all (or -all): {domain}. IN TXT "{fixed}"',
        )
        return
    if not public:
        yield ok(
            "spf",
            f"{domain} publishes SPF: {record!r} (the relay {relay} is not on a public address, so "
            "make sure the record names the address your mail leaves the network from)",
        )
        return
    for address in public:
        try:
            result = spf_result(Lookups(lookups.resolver), domain, address)
        except SpfError as exc:
            yield problem(
                "spf",
                f"the SPF record of {domain} cannot be evaluated: {exc}",
                f'fix it; a record that allows the relay: {domain}. IN TXT "v=spf1 ip{address.version}:{address} ~all"',
            )
            return
        if result == "pass":
            yield ok("spf", f"{domain}'s SPF record allows the relay {relay} ({address})")
        else:
            severity = problem if result == "fail" else warning
            yield severity(
                "spf",
                f"{domain}'s SPF record does not allow the relay {relay} ({address}): {result}",
                f'name it in the record: {domain}. IN TXT "{_with_ip(record, address)}"',
            )


# -- DKIM --------------------------------------------------------------------------------------


def _tags(record: str) -> dict[str, str]:
    """A tag=value list (RFC 6376 3.2), whitespace inside values removed (p= may be split)."""
    tags: dict[str, str] = {}
    for part in record.split(";"):
        name, eq, value = part.partition("=")
        if eq:
            tags.setdefault(name.strip().lower(), "".join(value.split()))
    return tags


def quoted_txt(text: str) -> str:
    """`text` as a zone file's TXT data: strings of at most 255 characters (RFC 1035 3.3.14)."""
    return " ".join(f'"{text[i : i + 255]}"' for i in range(0, len(text), 255))


def check_dkim(settings: Settings, lookups: Lookups, domain: str) -> Iterator[Finding]:
    from bot import dkim
    from bot.mail_out.compose import signing_domain

    if not settings.secrets.dkim_keys:
        yield ok(
            "dkim",
            "the bot does not sign its mail ([dkim] selectors is empty): fine when the relay signs "
            "it; otherwise DMARC rests on SPF alone",
        )
        return
    signing = signing_domain(settings)
    if signing != domain and not domain.endswith("." + signing) and not signing.endswith("." + domain):
        yield warning(
            "dkim",
            f"the signatures are for {signing}, which is not aligned with the From domain "
            f"{domain}: they do not count for DMARC",
            f'set [dkim] domain = "{domain}" (or empty)',
        )
    for key in dkim.keys_of(settings.secrets.dkim_keys):
        name = f"{key.selector}._domainkey.{signing}"
        publish = f"publish {name}. IN TXT {quoted_txt(key.record())}"
        found = [r for r in lookups.txt(name) if "p=" in r]
        if not found:
            yield problem(
                "dkim",
                f"no DKIM key record at {name}: receivers cannot verify the {key.algorithm} "
                f"signatures of selector {key.selector}",
                publish,
            )
            continue
        tags = _tags(found[0])
        published, kind = tags.get("p", ""), tags.get("k", "rsa").lower()
        if len(found) > 1:
            yield problem(
                "dkim", f"{name} has {len(found)} key records; a verifier takes one of them", "keep one: " + publish
            )
        elif not published:
            yield problem(
                "dkim",
                f"the key at {name} is revoked (an empty p=), but the bot signs with selector {key.selector}",
                publish + f", or take {key.selector} off [dkim] selectors",
            )
        elif kind != key.algorithm or published != key.public:
            yield problem(
                "dkim",
                f"{name} publishes another key than the one the bot signs with "
                f"({kind} key {published[:12]}..., the bot's: {key.algorithm} key {key.public[:12]}...)",
                "replace the record: " + publish,
            )
        else:
            yield ok("dkim", f"{name} publishes the {key.algorithm} key the bot signs with")


# -- DMARC -------------------------------------------------------------------------------------

_POLICIES = ("none", "quarantine", "reject")


def check_dmarc(settings: Settings, lookups: Lookups, domain: str) -> Iterator[Finding]:
    labels = domain.split(".")
    found: list[str] = []
    where = ""
    for start in range(0, max(1, len(labels) - 1)):  # the domain, then each parent down to two labels
        candidate = ".".join(labels[start:])
        found = [r for r in lookups.txt(f"_dmarc.{candidate}") if r.replace(" ", "").lower().startswith("v=dmarc1")]
        if found:
            where = candidate
            break
    suggested = f'publish _dmarc.{domain}. IN TXT "v=DMARC1; p=none; rua=mailto:postmaster@{domain}"'
    if not found:
        yield warning(
            "dmarc",
            f"{domain} has no DMARC record: large mail providers want one from senders, and "
            "without it they guess what to do with mail that fails",
            suggested + " (p=none asks only for reports; p=quarantine once they show your mail passing)",
        )
        return
    if len(found) > 1:
        yield problem(
            "dmarc",
            f"_dmarc.{where} has {len(found)} DMARC records: receivers then apply none (RFC 7489 6.6.3)",
            "keep one: " + suggested,
        )
        return
    tags = _tags(found[0])
    policy = tags.get("p", "").lower()
    if policy not in _POLICIES:
        yield problem(
            "dmarc",
            f"the DMARC record at _dmarc.{where} has no valid policy (p={policy or 'missing'}): receivers ignore it",
            "replace it: " + suggested.replace("_dmarc." + domain, "_dmarc." + where),
        )
        return
    inherited = f" (from the organisational domain {where})" if where != domain else ""
    yield ok("dmarc", f"{domain} has a DMARC policy p={policy}{inherited}")


# -- the whole check ---------------------------------------------------------------------------


def check_sending_domain(settings: Settings) -> Iterator[Finding]:
    """SPF, DKIM and DMARC of the From's domain, for mail that goes out over SMTP."""
    if settings.outbox.kind != "smtp":
        return
    domain = settings.bot.domain.lower().rstrip(".")
    if reserved(domain) and not settings.dns.nameservers:
        yield ok(
            "dns",
            f"{domain} is a name reserved for examples and tests (RFC 2606, 6761): its SPF, DKIM "
            "and DMARC records are not checked",
        )
        return
    try:
        lookups = Lookups(make_resolver(settings))
        for check in (check_spf, check_dkim, check_dmarc):
            yield from check(settings, lookups, domain)
    except DnsLookupError as exc:
        where = ", ".join(settings.dns.nameservers) or "the system's resolver"
        yield warning(
            "dns",
            f"could not check the DNS records of {domain}: {exc}",
            f"check the network and the resolver ({where}; [dns] nameservers names another)",
        )


__all__ = [
    "DnsLookupError",
    "Lookups",
    "SpfError",
    "check_dkim",
    "check_dmarc",
    "check_sending_domain",
    "check_spf",
    "make_resolver",
    "quoted_txt",
    "reserved",
    "spf_result",
]

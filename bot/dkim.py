"""DKIM signing of outgoing mail (RFC 6376, RFC 8463), for operators whose relay does not sign.

Off unless ``[dkim] selectors`` names keys (bot.settings). Each key is read once, here:

* **ed25519** (RFC 8463, ``a=ed25519-sha256``): the 32-byte seed in base64, as dkimpy's
  ``dknewkey --ktype ed25519`` writes it, or a PKCS#8 PEM (``openssl genpkey -algorithm
  ed25519``);
* **RSA** (``a=rsa-sha256``): a PEM private key, PKCS#1 or PKCS#8 (``openssl genpkey
  -algorithm rsa -pkeyopt rsa_keygen_bits:2048``).

Where mail is signed: in `bot.mail_out.compose.compose`, once, before the mail is stored. The
outbox row's bytes are what is sent, and what a retry resends with the same Message-ID; a
signature made there holds for every attempt, and the send path (`drain`) stays as it was.
The price: a mail queued under a key must be sent before that key's DNS record goes (keep
the old selector published until the outbox has drained, OPERATING.md, "DKIM").

During a rotation two keys are configured and every mail carries one signature per key
(RFC 6376 4.2: a verifier may pass any one of them): the old selector's record can then be
withdrawn at leisure. Signed: the header fields that say who the mail is from and what it is
(RFC 6376 5.4.1), plus our own, and ``From`` once more than it occurs (oversigned: a ``From``
added on the way breaks the signature). Canonicalisation relaxed/relaxed: relays that refold
headers or trailing space do not break it. The ``t=`` tag is the real time of signing
(dkimpy's clock): a verifier compares it with its own.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import dkim
import nacl.encoding
import nacl.signing

# What is signed where present, each as often as it occurs, and From once more (RFC 6376
# 5.4.2, 8.15: a second From added on the way then breaks the signature).
SIGNED_HEADERS = (
    "From",
    "To",
    "Subject",
    "Date",
    "Message-ID",
    "Reply-To",
    "In-Reply-To",
    "References",
    "MIME-Version",
    "Content-Type",
    "Content-Transfer-Encoding",
    "List-Id",
    "List-Unsubscribe",
    "Auto-Submitted",
)

ED25519 = "ed25519"
RSA = "rsa"

# PKCS#8 wrapping of an Ed25519 private key (RFC 8410 7): this fixed prefix, then the seed.
_PKCS8_ED25519 = bytes.fromhex("302e020100300506032b657004220420")
_PEM_RE = re.compile(r"-----BEGIN ([A-Z ]+)-----\s*(.*?)\s*-----END \1-----", re.S)


class DkimKeyError(ValueError):
    """A configured DKIM key cannot be read; the message says which and why."""


@dataclass(frozen=True, slots=True)
class DkimKey:
    """One signing key: its selector, its algorithm, the private key as dkimpy takes it, and the
    public key as its DNS record publishes it (``p=``)."""

    selector: str
    algorithm: str  # ED25519 | RSA
    private: bytes = b""  # dkimpy's form: base64 seed (ed25519) or the PEM (RSA)
    public: str = ""  # base64, as in the record's p=

    @property
    def signature_algorithm(self) -> bytes:
        return b"ed25519-sha256" if self.algorithm == ED25519 else b"rsa-sha256"

    def record(self) -> str:
        """The TXT record to publish at ``<selector>._domainkey.<domain>``."""
        return f"v=DKIM1; k={self.algorithm}; p={self.public}"


def load_key(selector: str, text: str) -> DkimKey:
    """The key in `text` (see the module docstring for the forms), or DkimKeyError."""
    text = text.strip()
    match = _PEM_RE.search(text)
    if match is None:
        try:
            seed = base64.b64decode("".join(text.split()), validate=True)
        except ValueError:
            seed = b""
        if len(seed) != 32:
            raise DkimKeyError(f"DKIM key {selector!r}: neither a PEM private key nor a base64 ed25519 seed (32 bytes)")
        return _ed25519(selector, seed)
    label, body = match.group(1), match.group(2)
    try:
        der = base64.b64decode("".join(body.split()), validate=True)
    except ValueError as exc:
        raise DkimKeyError(f"DKIM key {selector!r}: the PEM body is not base64") from exc
    if label == "PRIVATE KEY" and len(der) == 48 and der.startswith(_PKCS8_ED25519):
        return _ed25519(selector, der[len(_PKCS8_ED25519) :])
    if label not in ("PRIVATE KEY", "RSA PRIVATE KEY"):
        raise DkimKeyError(f"DKIM key {selector!r}: a PEM {label.lower()}, not a private key")
    try:
        private = dkim.crypto.parse_private_key(der)
    except dkim.crypto.UnparsableKeyError as exc:
        raise DkimKeyError(
            f"DKIM key {selector!r}: not an RSA or ed25519 private key ({str(exc).splitlines()[0]})"
        ) from exc
    bits = private["modulus"].bit_length()
    if bits < 1024:
        raise DkimKeyError(
            f"DKIM key {selector!r}: an RSA key of {bits} bits; verifiers need 1024 at least (RFC 8301: use 2048)"
        )
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + base64.encodebytes(_rsa_private_der(private)).decode("ascii")
        + "-----END RSA PRIVATE KEY-----\n"
    )
    public = base64.b64encode(rsa_public_der(private["modulus"], private["publicExponent"])).decode("ascii")
    return DkimKey(selector, RSA, pem.encode("ascii"), public)


def _ed25519(selector: str, seed: bytes) -> DkimKey:
    signing = nacl.signing.SigningKey(seed)
    public = signing.verify_key.encode(encoder=nacl.encoding.Base64Encoder).decode("ascii")
    return DkimKey(selector, ED25519, base64.b64encode(seed), public)


# -- DER, as little of it as the keys need ----------------------------------------------------


def _der(tag: int, content: bytes) -> bytes:
    length = len(content)
    if length < 0x80:
        head = bytes([length])
    else:
        size = (length.bit_length() + 7) // 8
        head = bytes([0x80 | size]) + length.to_bytes(size, "big")
    return bytes([tag]) + head + content


def _integer(value: int) -> bytes:
    return _der(0x02, value.to_bytes(value.bit_length() // 8 + 1, "big"))


def _rsa_private_der(key: dict[str, int]) -> bytes:
    """The PKCS#1 RSAPrivateKey (RFC 8017 A.1.2) of a key dkimpy parsed (PKCS#1 or PKCS#8)."""
    names = (
        "version",
        "modulus",
        "publicExponent",
        "privateExponent",
        "prime1",
        "prime2",
        "exponent1",
        "exponent2",
        "coefficient",
    )
    return _der(0x30, b"".join(_integer(key[name]) for name in names))


def rsa_public_der(modulus: int, exponent: int) -> bytes:
    """The SubjectPublicKeyInfo of an RSA public key (RFC 5280 4.1, RFC 8017 A.1.1): what a DKIM
    record's p= holds for k=rsa (RFC 6376 3.6.1)."""
    algorithm = _der(0x30, _der(0x06, bytes.fromhex("2a864886f70d010101")) + _der(0x05, b""))
    key = _der(0x30, _integer(modulus) + _integer(exponent))
    return _der(0x30, algorithm + _der(0x03, b"\x00" + key))


# -- signing -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def keys_of(configured: tuple[tuple[str, str], ...]) -> tuple[DkimKey, ...]:
    """The keys of ``Secrets.dkim_keys``, read once per configuration (a SIGHUP reload that
    changes them reads them again)."""
    return tuple(load_key(selector, text) for selector, text in configured)


_SIGNED = frozenset(name.lower() for name in SIGNED_HEADERS)


def signed_fields(data: bytes) -> list[bytes]:
    """The h= list for `data`: each field of SIGNED_HEADERS it has, once per occurrence, in
    the order they stand, then ``from`` once more."""
    head = data.split(b"\r\n\r\n", 1)[0]
    names = [
        line.split(b":", 1)[0].strip().lower()
        for line in head.split(b"\r\n")
        if line and line[:1] not in (b" ", b"\t") and b":" in line
    ]
    chosen = [name for name in names if name.decode("ascii", "replace") in _SIGNED]
    return [*chosen, b"from"]


def sign(data: bytes, domain: str, keys: Sequence[DkimKey]) -> bytes:
    """`data` (a whole mail, CRLF line ends) with a DKIM-Signature for each key on top, the
    first key's topmost. Each signature covers the mail as composed, not the other signatures."""
    if not keys:
        return data
    include = signed_fields(data)
    fields = []
    for key in keys:
        field = dkim.sign(
            data,
            key.selector.encode("ascii"),
            domain.encode("ascii"),
            key.private,
            canonicalize=(b"relaxed", b"relaxed"),
            signature_algorithm=key.signature_algorithm,
            include_headers=include,
            linesep=b"\r\n",
        )
        fields.append(field if field.endswith(b"\r\n") else field + b"\r\n")
    return b"".join(fields) + data


__all__ = [
    "ED25519",
    "RSA",
    "SIGNED_HEADERS",
    "DkimKey",
    "DkimKeyError",
    "keys_of",
    "load_key",
    "rsa_public_der",
    "sign",
    "signed_fields",
]

"""Authenticated Kafka clients: SASL and TLS settings passed through to aiokafka and faust.

Set ``MEMSTREAM_KAFKA_SECURITY_PROTOCOL`` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL),
``MEMSTREAM_KAFKA_SASL_MECHANISM`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; PLAIN when unset),
``MEMSTREAM_KAFKA_SASL_USERNAME``, ``MEMSTREAM_KAFKA_SASL_PASSWORD`` and
``MEMSTREAM_KAFKA_SSL_CAFILE`` (a PEM bundle; the system's CAs when unset). Every Kafka
client of the project (SDK producer, worker, projections, CLI readers, topic creation)
takes its options from :func:`client_options`, so one principal per deployment (or per
tenant's producers) is a matter of settings; the broker's ACLs then decide what it may
touch (``infra/KAFKA_SECURITY.md``).
"""

from __future__ import annotations

import ssl
from typing import Any

from memstream.infra.settings import ConfigError, Settings

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def _protocol(settings: Settings) -> str:
    protocol = (settings.kafka_security_protocol or "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise ConfigError(
            f"MEMSTREAM_KAFKA_SECURITY_PROTOCOL={settings.kafka_security_protocol!r}: "
            f"expected one of {', '.join(PROTOCOLS)}"
        )
    sasl = protocol.startswith("SASL_")
    user, password = settings.kafka_sasl_username, settings.kafka_sasl_password
    if sasl and not (user and password):
        raise ConfigError(
            f"{protocol} needs MEMSTREAM_KAFKA_SASL_USERNAME and MEMSTREAM_KAFKA_SASL_PASSWORD"
        )
    if not sasl and (user or password or settings.kafka_sasl_mechanism):
        raise ConfigError(
            "SASL settings are set but MEMSTREAM_KAFKA_SECURITY_PROTOCOL is "
            f"{protocol}: set it to SASL_SSL (or SASL_PLAINTEXT on a trusted network)"
        )
    if settings.kafka_ssl_cafile and not protocol.endswith("SSL"):
        raise ConfigError(
            f"MEMSTREAM_KAFKA_SSL_CAFILE is set but the protocol is {protocol}: use SSL or SASL_SSL"
        )
    return protocol


def _mechanism(settings: Settings) -> str:
    mechanism = (settings.kafka_sasl_mechanism or "PLAIN").upper()
    if mechanism not in MECHANISMS:
        raise ConfigError(
            f"MEMSTREAM_KAFKA_SASL_MECHANISM={settings.kafka_sasl_mechanism!r}: "
            f"expected one of {', '.join(MECHANISMS)}"
        )
    return mechanism


def ssl_context(settings: Settings) -> ssl.SSLContext:
    """Verifies the broker's certificate and host name (against the CA file, or the system's)."""
    try:
        return ssl.create_default_context(cafile=settings.kafka_ssl_cafile)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"MEMSTREAM_KAFKA_SSL_CAFILE={settings.kafka_ssl_cafile!r}: {e}") from e


def client_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for every aiokafka client (producer, consumer, admin)."""
    protocol = _protocol(settings)
    options: dict[str, Any] = {"security_protocol": protocol}
    if protocol.endswith("SSL"):
        options["ssl_context"] = ssl_context(settings)
    if protocol.startswith("SASL_"):
        options["sasl_mechanism"] = _mechanism(settings)
        options["sasl_plain_username"] = settings.kafka_sasl_username
        options["sasl_plain_password"] = settings.kafka_sasl_password
    return options


def faust_credentials(settings: Settings) -> Any:
    """The same settings as faust's ``broker_credentials`` (None: plaintext)."""
    from faust.auth import SASLCredentials, SSLCredentials

    protocol = _protocol(settings)
    if protocol == "PLAINTEXT":
        return None
    if protocol == "SSL":
        return SSLCredentials(ssl_context(settings))
    return SASLCredentials(
        username=settings.kafka_sasl_username,
        password=settings.kafka_sasl_password,
        ssl_context=ssl_context(settings) if protocol == "SASL_SSL" else None,
        mechanism=_mechanism(settings),
    )

"""Kafka client authentication: MEMSTREAM_KAFKA_* settings become aiokafka and faust options,
and wrong combinations fail with a message that names the setting.

End to end against a broker that requires SASL is not run here: the embedded Tansu keeps
users in its storage, and with memory storage a broker started with ``--authentication``
has no user and cannot be given one (creating a user needs an authenticated client).
"""

from __future__ import annotations

import ssl

import certifi
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from faust.auth import SASLCredentials, SSLCredentials

from memstream.consumers.auth import TOKEN_HEADER, bus_denial, header, parse_keys
from memstream.infra.kafka_auth import client_options, faust_credentials
from memstream.infra.settings import ConfigError, Settings, load


def _env(**values: str) -> Settings:
    return load(env={f"MEMSTREAM_KAFKA_{k.upper()}": v for k, v in values.items()})


def test_plaintext_by_default() -> None:
    assert client_options(Settings()) == {"security_protocol": "PLAINTEXT"}
    assert faust_credentials(Settings()) is None


def test_sasl_ssl_from_the_environment() -> None:
    s = _env(
        security_protocol="sasl_ssl",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="acme-producer",
        sasl_password="s3cret",
        ssl_cafile=certifi.where(),
    )
    options = client_options(s)
    assert options["security_protocol"] == "SASL_SSL"
    assert options["sasl_mechanism"] == "SCRAM-SHA-512"
    assert (options["sasl_plain_username"], options["sasl_plain_password"]) == (
        "acme-producer",
        "s3cret",
    )
    context = options["ssl_context"]
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    creds = faust_credentials(s)
    assert isinstance(creds, SASLCredentials)
    assert creds.protocol.value == "SASL_SSL" and creds.mechanism.value == "SCRAM-SHA-512"
    assert creds.username == "acme-producer" and creds.password == "s3cret"
    assert "s3cret" not in repr(s)  # settings are logged; the password is not


def test_tls_only_and_sasl_without_tls() -> None:
    tls = _env(security_protocol="SSL")
    assert set(client_options(tls)) == {"security_protocol", "ssl_context"}
    assert isinstance(faust_credentials(tls), SSLCredentials)
    plain = _env(security_protocol="SASL_PLAINTEXT", sasl_username="u", sasl_password="p")
    assert client_options(plain)["sasl_mechanism"] == "PLAIN"
    assert "ssl_context" not in client_options(plain)
    assert faust_credentials(plain).protocol.value == "SASL_PLAINTEXT"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"security_protocol": "KERBEROS"}, "expected one of PLAINTEXT"),
        ({"security_protocol": "SASL_SSL", "sasl_username": "u"}, "SASL_PASSWORD"),
        ({"sasl_username": "u", "sasl_password": "p"}, "set it to SASL_SSL"),
        ({"ssl_cafile": "/etc/ca.pem"}, "use SSL or SASL_SSL"),
        ({"security_protocol": "SSL", "ssl_cafile": "/no/such/ca.pem"}, "SSL_CAFILE"),
        (
            {
                "security_protocol": "SASL_SSL",
                "sasl_mechanism": "GSSAPI",
                "sasl_username": "u",
                "sasl_password": "p",
            },
            "SASL_MECHANISM",
        ),
    ],
)
def test_wrong_combinations_name_the_setting(values: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        client_options(_env(**values))


async def test_every_kind_of_client_takes_the_options() -> None:
    """aiokafka checks the protocol, mechanism and credentials when a client is built."""
    s = _env(security_protocol="SASL_SSL", sasl_username="u", sasl_password="p")
    options = client_options(s)
    producer = AIOKafkaProducer(bootstrap_servers="127.0.0.1:9", **options)
    consumer = AIOKafkaConsumer(bootstrap_servers="127.0.0.1:9", **options)
    admin = AIOKafkaAdminClient(bootstrap_servers="127.0.0.1:9", **options)
    for client in (producer.client, consumer._client, admin._client):
        assert (client._security_protocol, client._sasl_mechanism) == ("SASL_SSL", "PLAIN")
    await producer.stop()
    await consumer.stop()
    await admin.close()


def test_bus_tokens_are_checked_per_namespace() -> None:
    keys = parse_keys("ka=acme,root=*")
    assert bus_denial({}, None, "acme") is None  # no keys configured: open, as the HTTP API
    assert (bus_denial(keys, None, "acme") or "").startswith("unauthorized")
    assert TOKEN_HEADER in (bus_denial(keys, None, "acme") or "")
    assert (bus_denial(keys, "nope", "acme") or "").startswith("unauthorized")
    assert (bus_denial(keys, "ka", "globex") or "").startswith("forbidden")
    assert bus_denial(keys, "ka", "acme") is None
    assert bus_denial(keys, "root", "globex") is None
    assert header([("memstream-type", b"X"), (TOKEN_HEADER, b"ka")], TOKEN_HEADER) == "ka"
    assert header({TOKEN_HEADER: b"ka"}, TOKEN_HEADER) == "ka"
    assert header(None, TOKEN_HEADER) is None

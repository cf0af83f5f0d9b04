"""Schemathesis hooks for the conformance run (test/conformance/schemathesis.test.ts).

The served document describes an encrypted endpoint's body as the envelope `{"payload": "<iv>:<ciphertext>"}`
whose plaintext fields are in `x-plaintext` (docs/api.md, "The encrypted envelope"). Fuzzing the envelope
itself would only ever reach "the envelope does not decrypt", so the schema handed to Schemathesis describes
the fields, and each request is encrypted on its way out with the merchant's key, the way a merchant's client
does. An endpoint that takes plain JSON or the envelope is sent plain. The checks judge the fields that were
generated, never the ciphertext.
"""

import json
import os
import re
import uuid
from decimal import Decimal

import schemathesis
from schemathesis.core import NOT_SET
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

KEY = os.environ["PAYMENTS_ENCRYPTION_KEY"].encode("utf-8")
ENVELOPE_TITLE = "Encrypted envelope"

# (METHOD, path template) of every operation whose body travels encrypted.
ENCRYPTED: set[tuple[str, str]] = set()
# The fields each operation's body documents, by (METHOD, path template).
FIELDS: dict[tuple[str, str], set[str]] = {}


def encrypt(plaintext: bytes) -> str:
    """AES-256-CBC with PKCS#7 padding, `<iv hex>:<ciphertext hex>`, as the interface's section 4.1 says."""
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    data = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(KEY), modes.CBC(iv)).encryptor()
    return f"{iv.hex()}:{(encryptor.update(data) + encryptor.finalize()).hex()}"


@schemathesis.hook
def before_load_schema(context, raw_schema):
    # The long code lists (countries, currencies) as the same set spelled as a pattern: the coverage phase
    # sends every value of an enum, hundreds per field, and one or two of a pattern; what is valid is the same.
    for name, schema in raw_schema.get("components", {}).get("schemas", {}).items():
        values = schema.get("enum")
        if name.endswith("Code") or name.endswith("Or3"):
            if values and len(values) > 20:
                schema.pop("enum")
                schema["pattern"] = "^(" + "|".join(re.escape(value) for value in values) + ")$"
    for path, operations in raw_schema.get("paths", {}).items():
        for method, operation in operations.items():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if not body or "x-plaintext" not in body:
                continue
            content = body["content"]["application/json"]
            if content["schema"].get("title") == ENVELOPE_TITLE:
                ENCRYPTED.add((method.upper(), path))
            name = body["x-plaintext"]["$ref"].rsplit("/", 1)[-1]
            FIELDS[(method.upper(), path)] = set(raw_schema["components"]["schemas"][name]["properties"])
            # The fields, not the envelope (or the choice of the two): the example shows the envelope.
            content["schema"] = body["x-plaintext"]
            content.pop("example", None)


@schemathesis.hook
def before_call(context, case, kwargs):
    operation = case.operation
    # Each generated case is a request of its own: a valid Idempotency-Key made up twice (Schemathesis
    # repeats short values) would answer the first case's transaction, or 409 for other fields, by design.
    headers = kwargs.get("headers") or {}
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and re.fullmatch(r"[\x21-\x7e]{1,220}", key):
        headers["Idempotency-Key"] = f"{key}-{uuid.uuid4().hex}"
    if (operation.method.upper(), operation.path) not in ENCRYPTED or case.body is NOT_SET:
        return
    # The transport sends `json` from these arguments over the case's own body: the case keeps the fields
    # the checks judge, the wire carries their envelope.
    # A body that is not JSON (raw bytes, to test the refusal of one) is encrypted as it is.
    body = case.body if isinstance(case.body, bytes) else json.dumps(case.body).encode("utf-8")
    kwargs["json"] = {"payload": encrypt(body)}


# Refusals of a request valid in form that depend on what exists or on the date, which a schema cannot
# say: the wallet, transaction or template named must be the merchant's and in the right state, and a link
# must expire in the future. Schemathesis makes up the names and dates, so such a request is refused with
# the message below; only a 422 whose every failing field has one of these messages is not a failure.
STATE_DEPENDENT = {
    "The selected wallet id is invalid.",
    "The selected terminal id is invalid.",
    "The selected payment template id is invalid.",
    "This transaction cannot be refunded.",
    "This transaction cannot be charged back.",
    "The expiry date field must be in the future and within 90 days.",
    # A cursor is a token a list answered; two cursors at once is a rule across query parameters, which
    # OpenAPI parameters cannot state.
    "The nextCursor is not a cursor of this list.",
    "The prevCursor is not a cursor of this list.",
    "Give nextCursor or prevCursor, not both.",
    # The Luhn check digit, which a pattern cannot state (the description does).
    "The card number field must be a valid card number.",
    # Against today's date, or the calendar (a day that exists), which a pattern cannot state.
    "The card has expired.",
    "The expiry date field must be a date (YYYY-MM-DD) or an ISO 8601 time.",
    # A refund is of the transaction's whole amount, whatever it was.
    "Partial refunds are not supported: a refund returns the whole amount, so leave amount out.",
    # Documented as always refused (its schema is `not: {}`), yet sent by the coverage phase.
    "Wallet transactions have no status; filter them by transaction_type (the ledger step).",
}

# Rules across fields, which the documented schemas leave to the descriptions: which amount a transaction
# type takes, what another field requires, and where the catalogue offers an asset.
CROSS_FIELD = re.compile(
    r" is not allowed when | is required when | is required with | is required for | is not available in "
    r"|must be a calendar day that exists"
    # The catalogue's limits and networks per asset, and each currency's or asset's decimals.
    r"| must be between .+ for | must be one of .+ for | decimal places"
    # What the catalogue and the rate source hold (data, not schema).
    r"|^The selected .+ is not supported\.$"
    # The merchant's wallets.
    r"|^There is no .+ wallet "
)


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if failure.code != "ST202" or response.status_code != 422:
        return True
    try:
        errors = response.json().get("errors", {})
    except ValueError:
        return True
    known = FIELDS.get((case.operation.method.upper(), case.operation.path), set())
    messages = [
        (field, message)
        for field, field_messages in errors.items()
        for message in field_messages
        # Schemathesis does not generate keys by `propertyNames` (AnyJson): a control character in the
        # name of a field the API does not know is refused, as documented, though generated as valid.
        # The same for a key nested in a field that takes any JSON.
        if not (("." in field or field not in known) and message.endswith(CONTROL_CHARACTERS))
    ]
    return not all(
        message in STATE_DEPENDENT or CROSS_FIELD.search(message) or too_many_decimals(case, field, message)
        for field, message in messages
    )


def too_many_decimals(case, field, message):
    """A decimal amount sent as a JSON number with more than the 18 decimals the API documents: a number's
    schema cannot say how many decimals it may have (`multipleOf` reads floats inexactly)."""
    if not message.endswith("field must be a positive number.") or not isinstance(case.body, dict):
        return False
    value = case.body.get(field)
    return isinstance(value, float) and Decimal(repr(value)).as_tuple().exponent < -18


CONTROL_CHARACTERS = "must not contain control characters or invalid Unicode."

"""IAM conditions (CEL) that scope a Cloud Storage grant to one bucket prefix.

The bucket and prefix come from the blueprint, so they are hostile input: every value is
written as a CEL string literal with `cel_string`, never pasted between quotes. The schema
already refuses ``"``, ``\\``, ``*``, ``?``, ``$``, whitespace and control characters in
bucket URIs and sources; the escaping holds even if that ever changes.

CEL string literals and their escapes:
https://github.com/google/cel-spec/blob/master/doc/langdef.md#string-and-bytes-values.
The resource attributes (``resource.name`` of an object is
``projects/_/buckets/<bucket>/objects/<object>``; a list request names the bucket and carries
``storage.googleapis.com/objectListPrefix``):
https://cloud.google.com/storage/docs/access-control/iam#conditions and
https://cloud.google.com/iam/docs/conditions-attribute-reference#api-attributes.
"""

from __future__ import annotations

from typing import Final

_SIMPLE: Final = {"\\": "\\\\", '"': '\\"'}
LIST_PREFIX_ATTRIBUTE: Final = "storage.googleapis.com/objectListPrefix"


def cel_string(value: str) -> str:
    """`value` as a double-quoted CEL string literal: ``\\`` and ``"`` escaped, everything
    outside printable ASCII as ``\\uXXXX``/``\\UXXXXXXXX`` (so no character can end the
    literal or change how it is read)."""
    out = []
    for ch in value:
        code = ord(ch)
        if ch in _SIMPLE:
            out.append(_SIMPLE[ch])
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def object_prefix(bucket: str, prefix: str) -> str:
    """The ``resource.name`` prefix of the objects under `prefix` in `bucket`."""
    return f"projects/_/buckets/{bucket}/objects/{prefix}"


def gcs_read_condition(bucket: str, prefix: str) -> str:
    """Objects under the folder `prefix` (ending in ``/``), and listing the bucket only with
    a list prefix inside it (a list request names the bucket, not an object). Raises
    ValueError for any other `prefix`: ``startsWith`` of a bare prefix also matches its
    siblings (``llama`` matches ``llama-finance/``)."""
    _folder(prefix)
    return (
        f"resource.name.startsWith({cel_string(object_prefix(bucket, prefix))}) || "
        '(resource.type == "storage.googleapis.com/Bucket" && '
        f'api.getAttribute("{LIST_PREFIX_ATTRIBUTE}", "").startsWith({cel_string(prefix)}))'
    )


def gcs_write_condition(bucket: str, prefix: str) -> str:
    """Objects under the folder `prefix` (ending in ``/``) only; ValueError for any other."""
    _folder(prefix)
    return f"resource.name.startsWith({cel_string(object_prefix(bucket, prefix))})"


def _folder(prefix: str) -> None:
    if not prefix.endswith("/"):
        raise ValueError(
            f"a Cloud Storage condition names a folder ending in '/', not {prefix!r}, which "
            "as a prefix would also match its siblings"
        )


__all__ = ["cel_string", "gcs_read_condition", "gcs_write_condition", "object_prefix"]
